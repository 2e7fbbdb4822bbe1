// claude-code-router custom router for `conformance sut-config --format ccr` (CUSTOM_ROUTER_PATH, loaded by
// absolute path). Every provider of the generated config is named after the route (the model name the SDK sends,
// `<scenario>--<backend>--translate`), so a request goes to the provider its model names, with that provider's
// one realistic model. Any other model name falls back to ccr's own routing (null).
module.exports = async function router(req, config) {
  const model = req && req.body && typeof req.body.model === "string" ? req.body.model : "";
  const provider = ((config && config.Providers) || []).find((p) => p.name === model);
  return provider ? `${provider.name},${provider.models[0]}` : null;
};
