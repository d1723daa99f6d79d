{{/* vim: set filetype=mustache: */}}
{{/*
Naming follows `helm create` / Bitnami: <chart>.name, <chart>.fullname (63 chars), <chart>.chart.
*/}}
{{- define "fusion-proxy.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fusion-proxy.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Name of a component's objects: fusion-proxy.componentName (dict "context" $ "component" "api").
Truncated so that the suffix always survives.
*/}}
{{- define "fusion-proxy.componentName" -}}
{{- printf "%s-%s" (include "fusion-proxy.fullname" .context | trunc (int (sub 62 (len .component))) | trimSuffix "-") .component -}}
{{- end -}}

{{/*
Labels. Argo CD style: pass (dict "context" $ "component" "api"); component may be empty.
*/}}
{{- define "fusion-proxy.labels" -}}
helm.sh/chart: {{ include "fusion-proxy.chart" .context }}
{{ include "fusion-proxy.selectorLabels" . }}
{{- if .context.Chart.AppVersion }}
app.kubernetes.io/version: {{ .context.Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .context.Release.Service }}
app.kubernetes.io/part-of: fusion-proxy
{{- with .context.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "fusion-proxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fusion-proxy.name" .context }}
app.kubernetes.io/instance: {{ .context.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{- define "fusion-proxy.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fusion-proxy.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
Image reference for a component: (dict "context" $ "component" .Values.api).
A digest wins over a tag; the tag defaults to the chart's appVersion.
*/}}
{{- define "fusion-proxy.image" -}}
{{- $img := .context.Values.image -}}
{{- $repo := default $img.repository .component.image.repository -}}
{{- /* skaffold binds tag@digest; a local build that is not pushed has no digest and leaves "tag@". */}}
{{- $tag := default (default .context.Chart.AppVersion $img.tag) .component.image.tag | toString | trimSuffix "@" -}}
{{- $prefix := ternary (printf "%s/" $img.registry) "" (ne $img.registry "") -}}
{{- if $img.digest -}}
{{- printf "%s%s@%s" $prefix $repo $img.digest -}}
{{- else -}}
{{- printf "%s%s:%s" $prefix $repo $tag -}}
{{- end -}}
{{- end -}}

{{/* ---------------------------------------------------------------- secrets */}}

{{/* The Secret holding the proxy password and the job-encryption key. */}}
{{- define "fusion-proxy.secretName" -}}
{{- default (include "fusion-proxy.fullname" .) .Values.auth.existingSecret -}}
{{- end -}}

{{- define "fusion-proxy.secretPasswordKey" -}}
{{- ternary .Values.auth.existingSecretPasswordKey "proxy-password" (ne .Values.auth.existingSecret "") -}}
{{- end -}}

{{- define "fusion-proxy.secretEncryptionKeyKey" -}}
{{- ternary .Values.auth.existingSecretEncryptionKeyKey "job-encryption-key" (ne .Values.auth.existingSecret "") -}}
{{- end -}}

{{/*
Whether JOB_ENCRYPTION_KEY is passed. From an existingSecret the key is optional (secretKeyRef
optional: true): a Secret without it makes the pods derive the key from the password.
*/}}
{{- define "fusion-proxy.hasEncryptionKey" -}}
{{- if .Values.auth.existingSecret -}}
{{- if .Values.auth.existingSecretEncryptionKeyKey }}true{{ end -}}
{{- else if .Values.auth.jobEncryptionKey -}}
true
{{- end -}}
{{- end -}}

{{/*
Whether the key certainly exists (inline): only then can workers go without the password. With an
existingSecret the key may be missing, so workers keep the password to derive it.
*/}}
{{- define "fusion-proxy.encryptionKeyCertain" -}}
{{- if and (not .Values.auth.existingSecret) .Values.auth.jobEncryptionKey }}true{{ end -}}
{{- end -}}

{{/*
The job-encryption key format the pods accept (src/server/env.ts): 64 hex digits, or standard
base64 of 32 bytes (43 characters and up to two "="). URL-safe base64 (- and _) is refused there,
so it is refused here too; values.schema.json carries the same pattern.
*/}}
{{- define "fusion-proxy.encryptionKeyPattern" -}}
^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}={0,2})$
{{- end -}}

{{/* Fails the render with a clear message when no secret source is configured. */}}
{{- define "fusion-proxy.validateAuth" -}}
{{- if not .Values.auth.existingSecret -}}
{{- if not .Values.auth.proxyPassword -}}
{{- fail "fusion-proxy: set auth.proxyPassword (the platform source's \"Proxy password\") or auth.existingSecret; the chart has no default password" -}}
{{- end -}}
{{- $key := .Values.auth.jobEncryptionKey -}}
{{- if and $key (not (regexMatch (include "fusion-proxy.encryptionKeyPattern" .) $key)) -}}
{{- fail "fusion-proxy: auth.jobEncryptionKey must be 32 bytes written as 64 hex digits or standard base64 (openssl rand -base64 32); URL-safe base64 (- or _) is not accepted" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ redis */}}

{{/* Exactly one Redis source must be configured. */}}
{{- define "fusion-proxy.validateRedis" -}}
{{- $r := .Values.redis -}}
{{- if and (not $r.host) (not $r.bundled.enabled) -}}
{{- fail "fusion-proxy: no Redis configured: set redis.host (and redis.password or redis.existingSecret) for an external Redis, or redis.bundled.enabled=true for an evaluation Valkey (not for production)" -}}
{{- end -}}
{{- if and $r.host $r.bundled.enabled -}}
{{- fail "fusion-proxy: configure only one of redis.host and redis.bundled.enabled" -}}
{{- end -}}
{{- if and $r.password $r.existingSecret -}}
{{- fail "fusion-proxy: set redis.password or redis.existingSecret, not both" -}}
{{- end -}}
{{- if and $r.bundled.enabled (or $r.password $r.existingSecret $r.username $r.tls.enabled) -}}
{{- fail "fusion-proxy: redis.password, existingSecret, username and tls are settings of an external Redis (redis.host); the bundled Valkey has none" -}}
{{- end -}}
{{- if and $r.tls.caSecret (not $r.tls.enabled) -}}
{{- fail "fusion-proxy: redis.tls.caSecret needs redis.tls.enabled=true" -}}
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.redis.fullname" -}}
{{- include "fusion-proxy.componentName" (dict "context" . "component" "redis") -}}
{{- end -}}

{{/* host:port of the Redis the app and KEDA connect to. */}}
{{- define "fusion-proxy.redis.host" -}}
{{- ternary (include "fusion-proxy.redis.fullname" .) .Values.redis.host .Values.redis.bundled.enabled -}}
{{- end -}}

{{- define "fusion-proxy.redis.port" -}}
{{- ternary 6379 .Values.redis.port .Values.redis.bundled.enabled | int -}}
{{- end -}}

{{- define "fusion-proxy.redis.address" -}}
{{- $host := include "fusion-proxy.redis.host" . -}}
{{- printf "%s:%s" (ternary (printf "[%s]" $host) $host (contains ":" $host)) (include "fusion-proxy.redis.port" .) -}}
{{- end -}}

{{- define "fusion-proxy.redis.database" -}}
{{- ternary 0 .Values.redis.database .Values.redis.bundled.enabled | int -}}
{{- end -}}

{{/* REDIS_URL without credentials (they come in REDIS_USERNAME / REDIS_PASSWORD): not a secret. */}}
{{- define "fusion-proxy.redis.url" -}}
{{- printf "%s://%s/%s" (ternary "rediss" "redis" (and (not .Values.redis.bundled.enabled) .Values.redis.tls.enabled)) (include "fusion-proxy.redis.address" .) (include "fusion-proxy.redis.database" .) -}}
{{- end -}}

{{/* Secret and key of the Redis password ("" when Redis has no password). */}}
{{- define "fusion-proxy.redis.passwordSecretName" -}}
{{- if .Values.redis.existingSecret -}}
{{- .Values.redis.existingSecret -}}
{{- else if .Values.redis.password -}}
{{- include "fusion-proxy.fullname" . -}}
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.redis.passwordSecretKey" -}}
{{- ternary .Values.redis.existingSecretPasswordKey "redis-password" (ne .Values.redis.existingSecret "") -}}
{{- end -}}

{{/* The mounted CA of a private Redis CA. */}}
{{- define "fusion-proxy.redis.caDir" -}}
/etc/fusion-proxy/redis-ca
{{- end -}}

{{/* KEDA needs the chart Secret's `redis-tls: enable` (TriggerAuthentication takes values only from Secrets). */}}
{{- define "fusion-proxy.redis.kedaTlsAuth" -}}
{{- if and .Values.worker.keda.enabled .Values.redis.tls.enabled .Values.redis.tls.caSecret }}true{{ end -}}
{{- end -}}

{{/* Whether KEDA needs a TriggerAuthentication: a password or a private CA. */}}
{{- define "fusion-proxy.redis.kedaAuth" -}}
{{- if or (include "fusion-proxy.redis.passwordSecretName" .) (include "fusion-proxy.redis.kedaTlsAuth" .) }}true{{ end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ queue */}}

{{/*
The Redis LISTs where BullMQ keeps waiting and running jobs: <prefix>:<queue>:wait and :active.
Must equal waitListKey() and activeListKey() in src/queue/queue-names.ts (a chart test compares
them); a wrong name makes KEDA read LLEN 0 forever.
*/}}
{{- define "fusion-proxy.queue.waitListKey" -}}
{{- printf "bull:%s:wait" .Values.config.queueName -}}
{{- end -}}

{{- define "fusion-proxy.queue.activeListKey" -}}
{{- printf "bull:%s:active" .Values.config.queueName -}}
{{- end -}}

{{/* The quick commands' queue: laneQueueName("quick") in src/queue/queue-names.ts. */}}
{{- define "fusion-proxy.queue.quickWaitListKey" -}}
{{- printf "bull:%s-quick:wait" .Values.config.queueName -}}
{{- end -}}

{{- define "fusion-proxy.queue.quickActiveListKey" -}}
{{- printf "bull:%s-quick:active" .Values.config.queueName -}}
{{- end -}}

{{/* The matching child jobs' queue: shardQueueName() in src/queue/queue-names.ts. */}}
{{- define "fusion-proxy.queue.shardWaitListKey" -}}
{{- printf "bull:%s-shards:wait" .Values.config.queueName -}}
{{- end -}}

{{- define "fusion-proxy.queue.shardActiveListKey" -}}
{{- printf "bull:%s-shards:active" .Values.config.queueName -}}
{{- end -}}

{{/* "true" when workers keep their pod deletion cost: only while something scales them in. */}}
{{- define "fusion-proxy.worker.podDeletionCost" -}}
{{- $w := .Values.worker -}}
{{- if and $w.podDeletionCost.enabled (or $w.keda.enabled $w.autoscaling.enabled) -}}true{{- end -}}
{{- end -}}

{{/* Jobs (waiting + running) per worker replica: one worker runs workerConcurrency at once. */}}
{{- define "fusion-proxy.keda.jobsPerReplica" -}}
{{- $n := int .Values.worker.keda.jobsPerReplica -}}
{{- ternary $n (int .Values.config.workerConcurrency) (gt $n 0) -}}
{{- end -}}

{{/* SHUTDOWN_GRACE_MS of a component: its grace minus the preStop delay minus 10 s for the rest of the exit. */}}
{{- define "fusion-proxy.shutdownGraceMs" -}}
{{- $c := .values -}}
{{- $delay := 0 -}}
{{- if and (hasKey $c "preStopDelaySeconds") (not $c.lifecycle) -}}
{{- $delay = int $c.preStopDelaySeconds -}}
{{- end -}}
{{- mul (max 0 (sub (sub (int $c.terminationGracePeriodSeconds) $delay) 10)) 1000 -}}
{{- end -}}

{{/* ----------------------------------------------------------------- checks */}}

{{- define "fusion-proxy.validate" -}}
{{- include "fusion-proxy.validateAuth" . -}}
{{- include "fusion-proxy.validateRedis" . -}}
{{- if and .Values.worker.keda.enabled .Values.worker.autoscaling.enabled -}}
{{- fail "fusion-proxy: worker.keda.enabled and worker.autoscaling.enabled are mutually exclusive (KEDA creates its own HPA; two HPAs on one Deployment fight)" -}}
{{- end -}}
{{- if not (hasPrefix "/" .Values.config.proxyPath) -}}
{{- fail "fusion-proxy: config.proxyPath must start with /" -}}
{{- end -}}
{{- $np := .Values.networkPolicy -}}
{{- if and $np.enabled $np.strict (or (not $np.ingressControllerPeers) (not $np.metricsPeers)) -}}
{{- fail "fusion-proxy: networkPolicy.strict needs networkPolicy.ingressControllerPeers (who sends proxy traffic: your ingress controller or gateway) and networkPolicy.metricsPeers (your Prometheus); without them strict mode would cut both off" -}}
{{- end -}}
{{- if eq (int .Values.metrics.port) (int .Values.config.port) -}}
{{- fail "fusion-proxy: metrics.port must differ from config.port (/metrics gets its own port, which the ingress never reaches)" -}}
{{- end -}}
{{- end -}}

{{/* Whether a component can have more than one pod (a PDB with one pod blocks drains forever). */}}
{{- define "fusion-proxy.multiPod" -}}
{{- $c := .component -}}
{{- if and (hasKey $c "keda") $c.keda.enabled -}}
{{- if gt (int $c.keda.maxReplicaCount) 1 }}true{{ end -}}
{{- else if $c.autoscaling.enabled -}}
{{- if gt (int $c.autoscaling.minReplicas) 1 }}true{{ end -}}
{{- else if gt (int $c.replicaCount) 1 -}}
true
{{- end -}}
{{- end -}}

{{/* PromQL label matchers selecting this release's scrape targets (default job = Service name). */}}
{{- define "fusion-proxy.promSelector" -}}
{{- printf "namespace=\"%s\",job=~\"%s|%s\"" .Release.Namespace (include "fusion-proxy.metricsServiceName" (dict "context" . "component" "api")) (include "fusion-proxy.metricsServiceName" (dict "context" . "component" "worker")) -}}
{{- end -}}

{{/*
The Service a ServiceMonitor scrapes for a component (its name is the `job` label). The api has a
headless one of its own, so its traffic Service (the Ingress backend, maybe a LoadBalancer) never
carries the metrics port; the workers' headless Service exists only for this.
*/}}
{{- define "fusion-proxy.metricsServiceName" -}}
{{- if eq .component "api" -}}
{{- include "fusion-proxy.componentName" (dict "context" .context "component" "api-metrics") -}}
{{- else -}}
{{- include "fusion-proxy.componentName" . -}}
{{- end -}}
{{- end -}}

{{/* Marks the metrics Services, so a ServiceMonitor never selects the api's traffic Service. */}}
{{- define "fusion-proxy.metricsServiceMarker" -}}
fusion-proxy/metrics: "true"
{{- end -}}

{{/* Selector of a component's metrics Service: (dict "context" $ "component" "api"). */}}
{{- define "fusion-proxy.metricsServiceLabels" -}}
{{ include "fusion-proxy.selectorLabels" . }}
{{ include "fusion-proxy.metricsServiceMarker" .context }}
{{- end -}}

{{/*
TRUST_PROXY for the api: the configured value, or one hop when traffic arrives through the
chart's Ingress or HTTPRoute, so the password throttle sees clients rather than the ingress.
*/}}
{{- define "fusion-proxy.trustProxy" -}}
{{- $v := toString .Values.config.trustProxy -}}
{{- if ne $v "" -}}
{{- $v -}}
{{- else if or .Values.ingress.enabled .Values.httpRoute.enabled -}}
1
{{- end -}}
{{- end -}}
