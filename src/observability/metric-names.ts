/**
 * Every metric name the product exports. The Grafana dashboard and the PrometheusRule in the
 * chart use only these names; a chart test checks that each one is registered by the code.
 * Allowed labels are listed beside each name (bounded cardinality, never ids).
 */
export const METRIC = {
  /** counter {route, method, status} */
  httpRequests: 'fusion_http_requests_total',
  /** histogram {route, method} */
  httpRequestDuration: 'fusion_http_request_duration_seconds',
  /** counter {reason}: proxy password rejections and throttled addresses */
  authFailures: 'fusion_auth_failures_total',
  /** counter {command, outcome}: outcome = success | error | cancelled */
  jobs: 'fusion_jobs_total',
  /** histogram {command, outcome} */
  jobDuration: 'fusion_job_duration_seconds',
  /** gauge {state}: waiting | active | delayed | failed | completed | prioritized */
  queueJobs: 'fusion_queue_jobs',
  /** gauge: workers currently connected to the queue */
  queueWorkers: 'fusion_queue_workers',
  /** gauge: responses currently streaming to clients */
  activeStreams: 'fusion_active_streams',
  /** counter {mode}: NDJSON bytes written to clients; mode = embedded | queue */
  streamBytes: 'fusion_stream_bytes_total',
  /** counter {mode} */
  streamItems: 'fusion_stream_items_total',
  /** counter {component, code}: FusionError codes, plus UNEXPECTED */
  errors: 'fusion_errors_total',
  /** counter {platform_endpoint, method, status}: platform_endpoint is the path template, e.g. /v3/accounts/{id} */
  platformRequests: 'fusion_platform_requests_total',
  /** histogram {platform_endpoint, method} */
  platformRequestDuration: 'fusion_platform_request_duration_seconds',
  /** counter {platform_endpoint} */
  platform429: 'fusion_platform_rate_limited_total',
  /** counter {platform_endpoint, reason}: reason = rate_limited | server_error | network */
  platformRetries: 'fusion_platform_retries_total',
  /** histogram {limiter}: seconds a request waited for a rate-limit grant (not the concurrency cap) */
  rateLimiterWait: 'fusion_ratelimit_wait_seconds',
  /** histogram {limiter}: seconds a request waited for a slot under the concurrency cap */
  concurrencyWait: 'fusion_ratelimit_concurrency_wait_seconds',
  /** gauge {limiter}: configured requests per second of a limiter key (tenant host/hash of the client id) */
  rateLimitConfiguredRps: 'fusion_ratelimit_configured_rps',
  /** counter {limiter}: platform requests sent under a limiter key; rate() is the achieved rate */
  rateLimitRequests: 'fusion_ratelimit_requests_total',
  /** counter {limiter}: platform 429s under a limiter key */
  rateLimitThrottled: 'fusion_ratelimit_throttled_total',
  /** counter {result}: acquired | busy | stale */
  lockAttempts: 'fusion_lock_attempts_total',
  /** counter {command}: accounts emitted by aggregation */
  accountsProcessed: 'fusion_accounts_processed_total',
  /** histogram {attribute_algorithm}: candidates scored per account */
  matchingCandidates: 'fusion_matching_candidates_per_account',
  /** counter {algorithm}: times the index fell back to a full scan */
  matchingFullScans: 'fusion_matching_full_scans_total',
  /** counter {reason}: below_threshold | mandatory_failed | value_missing | matched */
  matchingPairs: 'fusion_matching_pairs_total',
  /** counter {outcome}: completed | failed | run_ended — matching child jobs of sharded aggregations */
  shardJobs: 'fusion_matching_shard_jobs_total',
  /** histogram: seconds per matching child job on a worker */
  shardJobDuration: 'fusion_matching_shard_job_duration_seconds',
  /** counter {outcome}: ended | held | run_gone | stopped | claim_lost | failed — partition jobs a worker took */
  partitionJobs: 'fusion_matching_partition_jobs_total',
  /** counter: partitions a run took over (no worker took the job, or the one that did stopped or died) */
  partitionTakeovers: 'fusion_matching_partition_takeovers_total',
  /** counter */
  reviewFormsCreated: 'fusion_review_forms_created_total',
} as const;
