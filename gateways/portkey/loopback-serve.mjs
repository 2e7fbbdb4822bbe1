// @hono/node-server with serve() pinned to 127.0.0.1.
import { serve as realServe } from "@hono/node-server";

export * from "@hono/node-server";

export function serve(options, listener) {
  return realServe({ ...options, hostname: "127.0.0.1" }, listener);
}
