/**
 * The architecture as rules (npm run lint:deps): no import cycles, and each layer imports only
 * what sits below it. src/README.md draws the same picture.
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
      name: 'platform-not-server-or-queue',
      severity: 'error',
      comment: 'The platform adapter serves every mode; it knows nothing of how commands arrive.',
      from: { path: '^src/platform/' },
      to: { path: '^src/(server|queue|dispatch|connector|proxy-client|cli|simulator|runtime)/' },
    },
    {
      name: 'dispatch-is-mode-neutral',
      severity: 'error',
      comment: 'dispatch is what embedded and queue mode share: no Fastify, no BullMQ, no Redis.',
      from: { path: '^src/dispatch/' },
      to: { path: '^src/(server|queue|locks|connector|cli|simulator)/' },
    },
    {
      name: 'dispatch-no-transport-packages',
      severity: 'error',
      from: { path: '^src/dispatch/' },
      to: { dependencyTypes: ['npm', 'npm-dev'], path: 'node_modules/(fastify|fastify-plugin|bullmq|ioredis)/' },
    },
    {
      name: 'queue-not-server',
      severity: 'error',
      comment: 'Workers run without the HTTP server; the api uses the queue, never the other way.',
      from: { path: '^src/queue/' },
      to: { path: '^src/(server|connector|cli|simulator)/' },
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
      comment: 'The simulator plays the platform: it shares no code with what it tests except error codes.',
      from: { path: '^src/simulator/' },
      to: {
        path: '^src/(core|platform|server|queue|dispatch|connector|proxy-client|locks|runtime)/',
        pathNot: '^src/core/errors[.]ts$',
      },
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
