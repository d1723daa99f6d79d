{{/*
Two modes. Default (permissive): each pod accepts traffic only on the ports it serves, from the
configured peers or, when none are set, from any source (the ingress controller, Prometheus and
KEDA may live anywhere); egress is not restricted (the platform may be reached through a proxy on
any port). Strict: only the configured peers, and egress only to DNS, Redis and the platform.
*/}}

{{/* policyTypes of the api and worker policies. */}}
{{- define "fusion-proxy.networkPolicy.types" -}}
- Ingress
{{- if .Values.networkPolicy.strict }}
- Egress
{{- end }}
{{- end -}}

{{/* One ingress rule: the peers (or anyone when none) to one named port. */}}
{{- define "fusion-proxy.networkPolicy.rule" -}}
- {{- with .peers }}
  from:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    - port: {{ .port }}
      protocol: TCP
{{- end -}}

{{/* Prometheus may scrape the metrics port (the only port serving /metrics), and nothing else. */}}
{{- define "fusion-proxy.networkPolicy.metricsIngress" -}}
{{- include "fusion-proxy.networkPolicy.rule" (dict "peers" .Values.networkPolicy.metricsPeers "port" "metrics") }}
{{- end -}}

{{/* Egress every fusion-proxy pod needs in strict mode: DNS and Redis. */}}
{{- define "fusion-proxy.networkPolicy.baseEgress" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- if .Values.redis.bundled.enabled }}
- to:
    - podSelector:
        matchLabels:
          {{- include "fusion-proxy.selectorLabels" (dict "context" . "component" "redis") | nindent 10 }}
  ports:
    - port: 6379
      protocol: TCP
{{- else }}
- {{- with .Values.networkPolicy.redisEgressPeers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    - port: {{ include "fusion-proxy.redis.port" . | int }}
      protocol: TCP
{{- end }}
{{- end -}}
