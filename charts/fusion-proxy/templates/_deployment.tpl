{{/*
One Deployment shape for both roles (same image, ROLE differs):
  include "fusion-proxy.deployment" (dict "context" $ "component" "api" "values" .Values.api)
*/}}
{{- define "fusion-proxy.deployment" -}}
{{- $ := .context -}}
{{- $c := .values -}}
{{- $component := .component -}}
{{- $labelArgs := dict "context" $ "component" $component -}}
{{- $scaled := or $c.autoscaling.enabled (and (hasKey $c "keda") $c.keda.enabled) -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "fusion-proxy.componentName" $labelArgs }}
  namespace: {{ $.Release.Namespace | quote }}
  labels:
    {{- include "fusion-proxy.labels" $labelArgs | nindent 4 }}
  {{- with $.Values.commonAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- if not $scaled }}
  replicas: {{ $c.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "fusion-proxy.selectorLabels" $labelArgs | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- include "fusion-proxy.selectorLabels" $labelArgs | nindent 8 }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- /* Rolls the pods when the chart-managed Secret changes (not for an existingSecret). */}}
        checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") $ | sha256sum }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "fusion-proxy.serviceAccountName" $ }}
      {{- /* A worker keeping its pod deletion cost calls the Kubernetes API with the pod's token. */}}
      automountServiceAccountToken: {{ or $.Values.serviceAccount.automountServiceAccountToken (and (eq $component "worker") (eq (include "fusion-proxy.worker.podDeletionCost" $) "true")) }}
      {{- with $.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      {{- with $c.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $c.initContainers }}
      initContainers:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $c.podSecurityContext | nindent 8 }}
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      topologySpreadConstraints:
        {{- if $c.topologySpreadConstraints }}
        {{- range $c.topologySpreadConstraints }}
        - {{- toYaml (mergeOverwrite (dict "labelSelector" (dict "matchLabels" (include "fusion-proxy.selectorLabels" $labelArgs | fromYaml))) .) | nindent 10 }}
        {{- end }}
        {{- else }}
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "fusion-proxy.selectorLabels" $labelArgs | nindent 14 }}
        {{- end }}
      containers:
        - name: {{ $component }}
          image: {{ include "fusion-proxy.image" (dict "context" $ "component" $c) | quote }}
          imagePullPolicy: {{ $.Values.image.pullPolicy }}
          args: ["serve"]
          securityContext:
            {{- toYaml $c.containerSecurityContext | nindent 12 }}
          ports:
            - name: http
              containerPort: {{ $.Values.config.port }}
              protocol: TCP
            - name: metrics
              containerPort: {{ $.Values.metrics.port }}
              protocol: TCP
          env:
            - name: ROLE
              value: {{ $component | quote }}
            - name: PORT
              value: {{ $.Values.config.port | quote }}
            {{- /* GET /metrics only on this port (not on PORT, which the ingress reaches), in both roles. */}}
            - name: METRICS_PORT
              value: {{ $.Values.metrics.port | quote }}
            - name: LOG_LEVEL
              value: {{ $.Values.config.logLevel | quote }}
            - name: QUEUE_NAME
              value: {{ $.Values.config.queueName | quote }}
            - name: SHUTDOWN_GRACE_MS
              value: {{ include "fusion-proxy.shutdownGraceMs" (dict "values" $c) | quote }}
            {{- /* Both roles: the worker derives its progress interval and reader-idle timeout from it. */}}
            - name: REQUEST_TIMEOUT_MS
              value: {{ $.Values.config.requestTimeoutMs | int64 | quote }}
            {{- if eq $component "api" }}
            - name: PROXY_PATH
              value: {{ $.Values.config.proxyPath | quote }}
            - name: BODY_LIMIT_BYTES
              value: {{ $.Values.config.bodyLimitBytes | int64 | quote }}
            - name: HEARTBEAT_INTERVAL_MS
              value: {{ $.Values.config.heartbeatIntervalMs | int64 | quote }}
            {{- with include "fusion-proxy.trustProxy" $ }}
            - name: TRUST_PROXY
              value: {{ . | quote }}
            {{- end }}
            {{- else }}
            - name: WORKER_CONCURRENCY
              value: {{ $.Values.config.workerConcurrency | int64 | quote }}
            - name: WORKER_QUICK_CONCURRENCY
              value: {{ $.Values.config.workerQuickConcurrency | int64 | quote }}
            {{- if include "fusion-proxy.worker.podDeletionCost" $ }}
            - name: POD_DELETION_COST
              value: "true"
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            {{- end }}
            {{- if not (kindIs "invalid" $.Values.config.matchingThreads) }}
            - name: MATCHING_THREADS
              value: {{ $.Values.config.matchingThreads | int64 | quote }}
            {{- end }}
            - name: MATCHING_PARTITIONS
              value: {{ $.Values.config.matchingPartitions | quote }}
            {{- if not (kindIs "invalid" $.Values.config.matchingShardJobs) }}
            - name: MATCHING_SHARD_JOBS
              value: {{ $.Values.config.matchingShardJobs | int64 | quote }}
            {{- end }}
            {{- end }}
            {{- /* Workers need the password only to derive the job key when no key is certain to exist. */}}
            {{- if or (eq $component "api") (not (include "fusion-proxy.encryptionKeyCertain" $)) }}
            - name: PROXY_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{ include "fusion-proxy.secretName" $ }}
                  key: {{ include "fusion-proxy.secretPasswordKey" $ }}
            {{- end }}
            {{- if include "fusion-proxy.hasEncryptionKey" $ }}
            - name: JOB_ENCRYPTION_KEY
              valueFrom:
                secretKeyRef:
                  name: {{ include "fusion-proxy.secretName" $ }}
                  key: {{ include "fusion-proxy.secretEncryptionKeyKey" $ }}
                  {{- if $.Values.auth.existingSecret }}
                  {{- /* Documented as optional: a Secret without the key means "derive it from the password". */}}
                  optional: true
                  {{- end }}
            {{- end }}
            {{- /* No credentials in the URL: user and password come apart, as is (never URL-encoded). */}}
            - name: REDIS_URL
              value: {{ include "fusion-proxy.redis.url" $ | quote }}
            {{- with $.Values.redis.username }}
            - name: REDIS_USERNAME
              value: {{ . | quote }}
            {{- end }}
            {{- with include "fusion-proxy.redis.passwordSecretName" $ }}
            {{- /* KEDA's TriggerAuthentication reads this same Secret key. */}}
            - name: REDIS_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{ . }}
                  key: {{ include "fusion-proxy.redis.passwordSecretKey" $ }}
            {{- end }}
            {{- if $.Values.redis.tls.caSecret }}
            - name: REDIS_TLS_CA_FILE
              value: {{ printf "%s/%s" (include "fusion-proxy.redis.caDir" $) $.Values.redis.tls.caSecretKey | quote }}
            {{- end }}
            {{- with $.Values.extraEnvVars }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $c.extraEnvVars }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- with $.Values.extraEnvVarsSecret }}
          envFrom:
            - secretRef:
                name: {{ . }}
          {{- end }}
          {{- with $c.startupProbe }}
          {{- if .enabled }}
          startupProbe:
            httpGet:
              path: {{ .path }}
              port: http
            periodSeconds: {{ .periodSeconds }}
            timeoutSeconds: {{ .timeoutSeconds }}
            failureThreshold: {{ .failureThreshold }}
          {{- end }}
          {{- end }}
          {{- with $c.livenessProbe }}
          {{- if .enabled }}
          livenessProbe:
            httpGet:
              path: {{ .path }}
              port: http
            periodSeconds: {{ .periodSeconds }}
            timeoutSeconds: {{ .timeoutSeconds }}
            failureThreshold: {{ .failureThreshold }}
          {{- end }}
          {{- end }}
          {{- with $c.readinessProbe }}
          {{- if .enabled }}
          readinessProbe:
            httpGet:
              path: {{ .path }}
              port: http
            periodSeconds: {{ .periodSeconds }}
            timeoutSeconds: {{ .timeoutSeconds }}
            failureThreshold: {{ .failureThreshold }}
          {{- end }}
          {{- end }}
          {{- if $c.lifecycle }}
          lifecycle:
            {{- toYaml $c.lifecycle | nindent 12 }}
          {{- else if gt (int (default 0 $c.preStopDelaySeconds)) 0 }}
          {{- /*
          Kubernetes removes a terminating pod from Service endpoints while it sends SIGTERM; kube-proxy
          and ingress controllers learn it seconds later. Sleeping first keeps the pod serving meanwhile.
          */}}
          lifecycle:
            preStop:
              exec:
                command: ["sleep", {{ $c.preStopDelaySeconds | int | quote }}]
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          volumeMounts:
            {{- /* The root filesystem is read-only; Node and libraries may still need a scratch dir. */}}
            - name: tmp
              mountPath: /tmp
            {{- if $.Values.redis.tls.caSecret }}
            - name: redis-ca
              mountPath: {{ include "fusion-proxy.redis.caDir" $ }}
              readOnly: true
            {{- end }}
            {{- with $c.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
        {{- with $c.sidecars }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with $.Values.redis.tls.caSecret }}
        - name: redis-ca
          secret:
            secretName: {{ . }}
            items:
              - key: {{ $.Values.redis.tls.caSecretKey }}
                path: {{ $.Values.redis.tls.caSecretKey }}
        {{- end }}
        {{- with $c.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end -}}

{{/* PodDisruptionBudget for a component; rendered only when it can have more than one pod. */}}
{{- define "fusion-proxy.pdb" -}}
{{- $ := .context -}}
{{- $c := .values -}}
{{- $labelArgs := dict "context" $ "component" .component -}}
{{- if and $c.pdb.create (include "fusion-proxy.multiPod" (dict "component" $c)) }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "fusion-proxy.componentName" $labelArgs }}
  namespace: {{ $.Release.Namespace | quote }}
  labels:
    {{- include "fusion-proxy.labels" $labelArgs | nindent 4 }}
  {{- with $.Values.commonAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- if ne (toString $c.pdb.minAvailable) "" }}
  minAvailable: {{ $c.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ default 1 $c.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "fusion-proxy.selectorLabels" $labelArgs | nindent 6 }}
{{- end }}
{{- end -}}

{{/* autoscaling/v2 HPA on CPU (and optionally memory). */}}
{{- define "fusion-proxy.hpa" -}}
{{- $ := .context -}}
{{- $c := .values -}}
{{- $labelArgs := dict "context" $ "component" .component -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "fusion-proxy.componentName" $labelArgs }}
  namespace: {{ $.Release.Namespace | quote }}
  labels:
    {{- include "fusion-proxy.labels" $labelArgs | nindent 4 }}
  {{- with $.Values.commonAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "fusion-proxy.componentName" $labelArgs }}
  minReplicas: {{ $c.autoscaling.minReplicas }}
  maxReplicas: {{ $c.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $c.autoscaling.targetCPUUtilizationPercentage }}
    {{- if $c.autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ $c.autoscaling.targetMemoryUtilizationPercentage }}
    {{- end }}
  {{- with $c.autoscaling.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
