{{/* Egress every fusion-proxy pod needs: DNS and Redis. */}}
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

{{/* Prometheus may scrape the metrics port (the only port serving /metrics), and nothing else. */}}
{{- define "fusion-proxy.networkPolicy.metricsIngress" -}}
{{- with .Values.networkPolicy.prometheusPeers }}
- from:
    {{- toYaml . | nindent 4 }}
  ports:
    - port: metrics
      protocol: TCP
{{- end }}
{{- end -}}
