// A stored tool call as an OCSF API Activity event (class 6003) with the ai_operation and security_control
// profiles. What it emits is written down, with the schema files it follows, in ocsf-1.8.0-api-activity.schema.json.
import { isIP } from 'node:net';
import { type ExportSource, errorTypeOf, PRODUCT, ruleOf, timesOf } from './source.ts';

export const OCSF_VERSION = '1.8.0';

const CATEGORY_UID = 6;
const CLASS_UID = 6003;
/** API Activity defines Create/Read/Update/Delete; a tool call is none of them, so Other with the source's label. */
const ACTIVITY_ID = 99;
const ACTIVITY_NAME = 'Invoke';

const SEVERITY = {
  allowed: { severity_id: 1, severity: 'Informational' },
  error: { severity_id: 2, severity: 'Low' },
  denied: { severity_id: 3, severity: 'Medium' },
} as const;

export interface OcsfPolicy {
  uid: string;
  name: string;
  version?: string;
}

export interface OcsfApiActivity {
  activity_id: typeof ACTIVITY_ID;
  activity_name: typeof ACTIVITY_NAME;
  category_uid: typeof CATEGORY_UID;
  category_name: 'Application Activity';
  class_uid: typeof CLASS_UID;
  class_name: 'API Activity';
  type_uid: number;
  type_name: string;
  time: number;
  start_time: number;
  end_time: number;
  duration: number;
  severity_id: 1 | 2 | 3;
  severity: 'Informational' | 'Low' | 'Medium';
  status_id: 1 | 2;
  status: 'Success' | 'Failure';
  status_code?: string;
  action_id: 1 | 2;
  action: 'Allowed' | 'Denied';
  disposition_id: 1 | 2;
  disposition: 'Allowed' | 'Blocked';
  policy?: OcsfPolicy;
  api: { operation: 'tools/call'; service: { name: string }; request?: { uid: string } };
  resources: { name: string; type: 'MCP Tool' }[];
  actor: { app_name: string; user?: { email_addr: string }; session?: { uid: string } };
  src_endpoint: { uid: string; name: string; ip?: string };
  message_context: {
    uid?: string;
    ai_role_id: 3;
    ai_role: 'Tool';
    service: { name: string };
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
  };
  metadata: {
    version: typeof OCSF_VERSION;
    product: { name: string; vendor_name: string };
    profiles: string[];
    uid: string;
    logged_time: number;
    correlation_uid?: string;
  };
}

/** The call as an OCSF 1.8.0 API Activity event. */
export function toOcsfApiActivity(source: ExportSource): OcsfApiActivity {
  const { event } = source;
  const { startMs, endMs } = timesOf(event);
  const denied = event.result === 'denied';
  const errorType = errorTypeOf(source);
  const out: OcsfApiActivity = {
    activity_id: ACTIVITY_ID,
    activity_name: ACTIVITY_NAME,
    category_uid: CATEGORY_UID,
    category_name: 'Application Activity',
    class_uid: CLASS_UID,
    class_name: 'API Activity',
    type_uid: CLASS_UID * 100 + ACTIVITY_ID,
    type_name: `API Activity: ${ACTIVITY_NAME}`,
    time: startMs,
    start_time: startMs,
    end_time: endMs,
    duration: event.duration_ms,
    ...SEVERITY[event.result],
    ...(errorType === undefined
      ? { status_id: 1, status: 'Success' }
      : { status_id: 2, status: 'Failure', status_code: errorType }),
    ...(denied
      ? { action_id: 2, action: 'Denied', disposition_id: 2, disposition: 'Blocked' }
      : { action_id: 1, action: 'Allowed', disposition_id: 1, disposition: 'Allowed' }),
    api: { operation: 'tools/call', service: { name: event.mcp_name } },
    resources: [{ name: event.tool, type: 'MCP Tool' }],
    actor: { app_name: event.agent_type },
    src_endpoint: { uid: event.device_id, name: event.serial_number },
    message_context: {
      ai_role_id: 3,
      ai_role: 'Tool',
      service: { name: event.mcp_name },
      prompt_tokens: event.tokens_in,
      completion_tokens: event.tokens_out,
      total_tokens: event.tokens_in + event.tokens_out,
    },
    metadata: {
      version: OCSF_VERSION,
      product: { name: PRODUCT.name, vendor_name: PRODUCT.vendor_name },
      profiles: ['ai_operation', 'security_control'],
      uid: event.id,
      logged_time: Date.parse(event.received_at),
    },
  };
  if (denied && event.rule_applied !== null) {
    const rule = ruleOf(event.rule_applied);
    out.policy = {
      uid: event.rule_applied,
      name: rule.id,
      ...(rule.version ? { version: rule.version } : {}),
    };
  }
  if (source.tool_call_id !== undefined) out.api.request = { uid: source.tool_call_id };
  if (event.actor_email !== null) out.actor.user = { email_addr: event.actor_email };
  if (event.session_id !== null) {
    out.actor.session = { uid: event.session_id };
    out.message_context.uid = event.session_id;
    out.metadata.correlation_uid = event.session_id;
  }
  // ip_t is an address: anything else the request context recorded stays out rather than failing the event.
  if (event.source_ip !== null && isIP(event.source_ip) !== 0) out.src_endpoint.ip = event.source_ip;
  return out;
}
