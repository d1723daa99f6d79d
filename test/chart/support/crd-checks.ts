import type { K8sObject } from './helm';

/**
 * Structural checks for custom resources kubernetes-models has no schema for (KEDA, Gateway API).
 * They cover the fields the controllers reject or silently ignore when wrong. Returns problems.
 */
export function checkCustomResource(obj: K8sObject): string[] | undefined {
  const id = `${obj.kind}/${obj.metadata.name}`;
  const problems: string[] = [];
  const spec = (obj as { spec?: Record<string, unknown> }).spec;
  const need = (cond: unknown, what: string): void => {
    if (!cond) problems.push(`${id}: ${what}`);
  };
  const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  const isInt = (v: unknown): boolean => Number.isInteger(v);

  switch (`${obj.apiVersion} ${obj.kind}`) {
    case 'keda.sh/v1alpha1 ScaledObject': {
      const target = spec?.scaleTargetRef as Record<string, unknown> | undefined;
      need(isStr(target?.name), 'spec.scaleTargetRef.name is required');
      for (const f of ['pollingInterval', 'cooldownPeriod', 'minReplicaCount', 'maxReplicaCount']) {
        if (spec?.[f] !== undefined) need(isInt(spec[f]), `spec.${f} must be an integer`);
      }
      const triggers = spec?.triggers;
      need(Array.isArray(triggers) && triggers.length > 0, 'spec.triggers must be a non-empty list');
      for (const [i, t] of (Array.isArray(triggers) ? triggers : []).entries()) {
        const trig = t as {
          type?: unknown;
          metadata?: Record<string, unknown>;
          authenticationRef?: { name?: unknown };
        };
        need(isStr(trig.type), `triggers[${i}].type is required`);
        need(trig.metadata && typeof trig.metadata === 'object', `triggers[${i}].metadata is required`);
        // KEDA's metadata is map[string]string: a YAML number or boolean fails admission.
        for (const [k, v] of Object.entries(trig.metadata ?? {}))
          need(typeof v === 'string', `triggers[${i}].metadata.${k} must be a string`);
        if (trig.authenticationRef)
          need(isStr(trig.authenticationRef.name), `triggers[${i}].authenticationRef.name is required`);
      }
      return problems;
    }
    case 'keda.sh/v1alpha1 TriggerAuthentication': {
      const refs = spec?.secretTargetRef;
      need(Array.isArray(refs) && refs.length > 0, 'spec.secretTargetRef must be a non-empty list');
      for (const [i, r] of (Array.isArray(refs) ? refs : []).entries()) {
        const ref = r as Record<string, unknown>;
        for (const f of ['parameter', 'name', 'key']) need(isStr(ref[f]), `secretTargetRef[${i}].${f} is required`);
      }
      return problems;
    }
    case 'gateway.networking.k8s.io/v1 HTTPRoute': {
      const parents = spec?.parentRefs;
      need(Array.isArray(parents) && parents.length > 0, 'spec.parentRefs must be a non-empty list');
      for (const [i, p] of (Array.isArray(parents) ? parents : []).entries())
        need(isStr((p as Record<string, unknown>).name), `parentRefs[${i}].name is required`);
      const rules = spec?.rules;
      need(Array.isArray(rules) && rules.length > 0, 'spec.rules must be a non-empty list');
      for (const [i, r] of (Array.isArray(rules) ? rules : []).entries()) {
        const rule = r as {
          matches?: Array<{ path?: { type?: unknown; value?: unknown } }>;
          backendRefs?: Array<Record<string, unknown>>;
        };
        for (const [j, m] of (rule.matches ?? []).entries()) {
          need(
            ['Exact', 'PathPrefix', 'RegularExpression'].includes(String(m.path?.type)),
            `rules[${i}].matches[${j}].path.type is invalid`,
          );
          need(
            isStr(m.path?.value) && String(m.path?.value).startsWith('/'),
            `rules[${i}].matches[${j}].path.value must start with /`,
          );
        }
        need((rule.backendRefs ?? []).length > 0, `rules[${i}].backendRefs must not be empty`);
        for (const [j, b] of (rule.backendRefs ?? []).entries()) {
          need(isStr(b.name), `rules[${i}].backendRefs[${j}].name is required`);
          need(isInt(b.port), `rules[${i}].backendRefs[${j}].port must be an integer`);
        }
      }
      return problems;
    }
    default:
      return undefined;
  }
}
