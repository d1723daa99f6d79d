/**
 * The architecture as rules (npm run lint runs dependency-cruiser): no import cycles, and each folder
 * of src/ imports only what sits below it: one rule per folder, the same table as src/README.md.
 */

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order matter and hides which module owns a rule.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-transport-free',
      severity: 'error',
      comment:
        'core runs the same in the connector, the embedded server and a queue worker: it reaches the world through ports.',
      from: { path: '^src/core/' },
      // errors (the code table) and observability (metrics registry) are cross-cutting, not transport.
      to: { path: '^src/(?!core/|errors/|observability/|secrets/)' },
    },
    {
      name: 'core-no-transport-packages',
      severity: 'error',
      from: { path: '^src/core/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev'],
        path: 'node_modules/(fastify|fastify-plugin|bullmq|ioredis|axios|sailpoint-api-client|@sailpoint)/',
      },
    },
    {
      name: 'ports-import-nothing',
      severity: 'error',
      comment: 'Ports are the bottom of core: interfaces only (the logging ones are defined in observability).',
      from: { path: '^src/core/ports/' },
      to: { path: '^src/(?!(core/ports/|observability/(logger|log-sink)-port[.]ts$))' },
    },
    {
      name: 'config-below-aggregation',
      severity: 'error',
      comment:
        'The configuration is read before anything runs: it knows the settings, not the pipeline that uses them (the account filter lives here).',
      from: { path: '^src/core/config/' },
      to: {
        path: '^src/(?!(core/config/|core/(errors|command-types)[.]ts$|core/matching/|core/ports/|errors/|secrets/|observability/))',
      },
    },
    {
      name: 'platform-layer',
      severity: 'error',
      comment: 'The platform adapter serves every mode; it knows nothing of how commands arrive.',
      from: { path: '^src/platform/' },
      to: { path: '^src/(?!(platform/|core/|observability/|errors/|secrets/))' },
    },
    {
      name: 'locks-layer',
      severity: 'error',
      comment: 'Run locks implement a core port; nothing else.',
      from: { path: '^src/locks/' },
      to: { path: '^src/(?!(locks/|core/|errors/))' },
    },
    {
      name: 'dispatch-is-mode-neutral',
      severity: 'error',
      comment: 'dispatch is what embedded and queue mode share: no Fastify, no BullMQ, no Redis.',
      from: { path: '^src/dispatch/' },
      to: { path: '^src/(?!(dispatch/|core/|observability/|errors/|secrets/))' },
    },
    {
      name: 'queue-not-server',
      severity: 'error',
      comment: 'Workers run without the HTTP server; the api uses the queue, never the other way.',
      from: { path: '^src/queue/' },
      // locks: a partition's claim is a run lock of its own (partition-claims.ts).
      to: { path: '^src/(?!(queue/|core/|dispatch/|locks/|observability/|errors/|secrets/))' },
    },
    {
      name: 'server-layer',
      severity: 'error',
      comment: 'The HTTP surface composes a role from the layers below it; the runtime reaches it through the CLI.',
      from: { path: '^src/server/' },
      to: { path: '^src/(?!(server/|core/|dispatch/|queue/|observability/|errors/|secrets/))' },
    },
    {
      name: 'runtime-layer',
      severity: 'error',
      comment:
        'The composition root of the core wires ports to adapters; transports (queue, server) wire themselves in cli/.',
      from: { path: '^src/runtime/' },
      to: { path: '^src/(?!(runtime/|core/|platform/|locks/|observability/|errors/|secrets/))' },
    },
    {
      name: 'connector-layer',
      severity: 'error',
      comment: 'The SDK connector runs a command or forwards it; it never starts a server.',
      from: { path: '^src/connector/' },
      to: { path: '^src/(?!(connector/|core/|proxy-client/|runtime/|observability/|errors/|secrets/))' },
    },
    {
      name: 'proxy-client-layer',
      severity: 'error',
      comment: 'The forwarder is small and loaded inside the platform: errors, ports and secrets only.',
      from: { path: '^src/proxy-client/' },
      to: { path: '^src/(?!(proxy-client/|core/|errors/|secrets/))' },
    },
    {
      name: 'observability-below-core',
      severity: 'error',
      comment: 'One direction only: core -> observability (metrics, the logging types), never back.',
      from: { path: '^src/observability/' },
      to: { path: '^src/(?!(observability/|errors/|secrets/))' },
    },
    {
      name: 'errors-import-nothing',
      severity: 'error',
      comment: 'The error-code table is the bottom layer.',
      from: { path: '^src/errors/' },
      to: { path: '^src/(?!(errors/))' },
    },
    {
      name: 'secrets-import-nothing',
      severity: 'error',
      comment: 'The one secret rule is the bottom layer.',
      from: { path: '^src/secrets/' },
      to: { path: '^src/(?!(secrets/))' },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'cli/ is the top: it may import everything, and nothing imports it.',
      from: { path: '^src/(?!cli/)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'src-not-test',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|tools)/' },
    },
    {
      name: 'simulator-is-independent',
      severity: 'error',
      comment:
        'The simulator plays the platform: it shares no code with what it tests except error codes and the secret rule.',
      from: { path: '^src/simulator/' },
      to: { path: '^src/(?!(simulator/|secrets/|errors/|core/errors[.]ts$))' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-undeclared-dependency',
      severity: 'error',
      comment: 'src may use only what package.json declares as a dependency (a devDependency is absent in the image).',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown', 'npm-dev', 'npm-optional', 'npm-peer'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
