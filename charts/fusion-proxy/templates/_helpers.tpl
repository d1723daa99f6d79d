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

{{/* Whether a separate job-encryption key is configured (otherwise the server derives it from the password). */}}
{{- define "fusion-proxy.hasEncryptionKey" -}}
{{- if .Values.auth.existingSecret -}}
{{- if .Values.auth.existingSecretEncryptionKeyKey }}true{{ end -}}
{{- else if .Values.auth.jobEncryptionKey -}}
true
{{- end -}}
{{- end -}}

{{/* Fails the render with a clear message when no secret source is configured. */}}
{{- define "fusion-proxy.validateAuth" -}}
{{- if not .Values.auth.existingSecret -}}
{{- if not .Values.auth.proxyPassword -}}
{{- fail "fusion-proxy: set auth.proxyPassword (the platform source's \"Proxy password\") or auth.existingSecret; the chart has no default password" -}}
{{- end -}}
{{- $key := .Values.auth.jobEncryptionKey -}}
{{- if and $key (not (regexMatch "^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$" $key)) -}}
{{- fail "fusion-proxy: auth.jobEncryptionKey must be 32 bytes written as 64 hex digits or base64 (openssl rand -base64 32)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ redis */}}

{{/* Exactly one Redis source must be configured. */}}
{{- define "fusion-proxy.validateRedis" -}}
{{- $sources := 0 -}}
{{- if .Values.redis.url }}{{ $sources = add1 $sources }}{{ end -}}
{{- if .Values.redis.existingSecret }}{{ $sources = add1 $sources }}{{ end -}}
{{- if .Values.redis.bundled.enabled }}{{ $sources = add1 $sources }}{{ end -}}
{{- if eq $sources 0 -}}
{{- fail "fusion-proxy: no Redis configured: set redis.url or redis.existingSecret for an external Redis, or redis.bundled.enabled=true for an evaluation Redis (not for production)" -}}
{{- end -}}
{{- if gt $sources 1 -}}
{{- fail "fusion-proxy: configure only one of redis.url, redis.existingSecret and redis.bundled.enabled" -}}
{{- end -}}
{{- if and .Values.redis.url (not (regexMatch "^rediss?://" .Values.redis.url)) -}}
{{- fail "fusion-proxy: redis.url must start with redis:// or rediss://" -}}
{{- end -}}
{{- if and .Values.worker.keda.enabled .Values.redis.existingSecret (not .Values.redis.address) -}}
{{- fail "fusion-proxy: worker.keda.enabled with redis.existingSecret needs redis.address (host:port) for KEDA's redis trigger" -}}
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.redis.fullname" -}}
{{- include "fusion-proxy.componentName" (dict "context" . "component" "redis") -}}
{{- end -}}

{{/* The Redis URL of the bundled Redis (no credentials, so it is not a secret). */}}
{{- define "fusion-proxy.redis.url" -}}
{{- if .Values.redis.bundled.enabled -}}
{{- printf "redis://%s:6379" (include "fusion-proxy.redis.fullname" .) -}}
{{- else -}}
{{- .Values.redis.url -}}
{{- end -}}
{{- end -}}

{{/* Secret and key holding REDIS_URL when it may carry credentials (external Redis). */}}
{{- define "fusion-proxy.redis.secretName" -}}
{{- default (include "fusion-proxy.fullname" .) .Values.redis.existingSecret -}}
{{- end -}}

{{- define "fusion-proxy.redis.secretUrlKey" -}}
{{- ternary .Values.redis.existingSecretUrlKey "redis-url" (ne .Values.redis.existingSecret "") -}}
{{- end -}}

{{/* Redis password parsed from redis.url ("" when the URL has none). */}}
{{- define "fusion-proxy.redis.urlPassword" -}}
{{- if .Values.redis.url -}}
{{- $userinfo := (urlParse .Values.redis.url).userinfo -}}
{{- if contains ":" $userinfo -}}
{{- regexReplaceAll "^[^:]*:" $userinfo "" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Redis ACL user parsed from redis.url ("" when none). */}}
{{- define "fusion-proxy.redis.urlUsername" -}}
{{- if .Values.redis.url -}}
{{- $userinfo := (urlParse .Values.redis.url).userinfo -}}
{{- regexReplaceAll ":.*$" $userinfo "" -}}
{{- end -}}
{{- end -}}

{{/* host:port KEDA connects to. */}}
{{- define "fusion-proxy.redis.address" -}}
{{- if .Values.redis.bundled.enabled -}}
{{- printf "%s:6379" (include "fusion-proxy.redis.fullname" .) -}}
{{- else if .Values.redis.url -}}
{{- $host := (urlParse .Values.redis.url).host -}}
{{- ternary $host (printf "%s:6379" $host) (contains ":" $host) -}}
{{- else -}}
{{- .Values.redis.address -}}
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.redis.port" -}}
{{- $address := include "fusion-proxy.redis.address" . -}}
{{- if contains ":" $address -}}
{{- regexReplaceAll "^.*:" $address "" -}}
{{- else -}}
6379
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.redis.tls" -}}
{{- if .Values.redis.url -}}
{{- ternary "true" "false" (hasPrefix "rediss://" .Values.redis.url) -}}
{{- else if .Values.redis.existingSecret -}}
{{- ternary "true" "false" .Values.redis.tls -}}
{{- else -}}
false
{{- end -}}
{{- end -}}

{{- define "fusion-proxy.redis.databaseIndex" -}}
{{- if .Values.redis.url -}}
{{- $path := trimPrefix "/" (urlParse .Values.redis.url).path -}}
{{- default "0" $path -}}
{{- else -}}
{{- .Values.redis.databaseIndex | toString -}}
{{- end -}}
{{- end -}}

{{/* Whether KEDA needs a TriggerAuthentication (a password exists in some Secret). */}}
{{- define "fusion-proxy.redis.kedaAuth" -}}
{{- if and .Values.redis.existingSecret .Values.redis.existingSecretPasswordKey -}}
true
{{- else if ne (include "fusion-proxy.redis.urlPassword" .) "" -}}
true
{{- end -}}
{{- end -}}

{{/* Secret and key KEDA reads the Redis password from. */}}
{{- define "fusion-proxy.redis.passwordSecretKey" -}}
{{- ternary .Values.redis.existingSecretPasswordKey "redis-password" (ne .Values.redis.existingSecret "") -}}
{{- end -}}

{{/* ------------------------------------------------------------------ queue */}}

{{/*
The Redis LIST where BullMQ keeps waiting jobs: <prefix>:<queue>:wait. Must equal waitListKey() in
src/queue/queue-names.ts (a chart test compares them); a wrong name makes KEDA read LLEN 0 forever.
*/}}
{{- define "fusion-proxy.queue.waitListKey" -}}
{{- printf "bull:%s:wait" .Values.config.queueName -}}
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
