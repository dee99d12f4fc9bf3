// Preloaded by the proxy's tests (node --import): every server listens on 127.0.0.1 only, on a free
// port it prints on stderr as "port N", so a test never opens a port beyond loopback.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => console.error(`port ${this.address().port}`));
  return listen.call(this, 0, "127.0.0.1", ...args.filter((argument) => typeof argument === "function"));
};
