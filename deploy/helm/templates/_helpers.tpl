{{/* "repository:tag" of one of the image values. */}}
{{- define "ng.image" -}}
{{ .repository }}:{{ .tag }}
{{- end -}}

{{/* The securityContext of the steps that write the host's CNI dirs: root
     (the dirs are root's), every capability dropped. */}}
{{- define "ng.rootNoCaps" -}}
securityContext:
  runAsUser: 0
  runAsNonRoot: false
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop:
      - ALL
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/* The host's CNI dirs as the installer's containers mount them. */}}
{{- define "ng.cniMounts" -}}
- name: cni-conf
  mountPath: /host/etc/cni/net.d
- name: cni-bin
  mountPath: /host/opt/cni/bin
{{- end -}}

{{- define "ng.mode" -}}
{{- if not (has .Values.mode (list "install" "uninstall")) -}}
{{- fail (printf "mode must be install or uninstall, not %q" .Values.mode) -}}
{{- end -}}
{{- .Values.mode -}}
{{- end -}}
