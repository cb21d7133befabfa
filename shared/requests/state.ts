// The state machine of a data-access request, in one place. Every move the service makes goes through `TRANSITIONS`:
// the domain code turns a move into one guarded UPDATE (`WHERE status IN from`), so a move that is not allowed changes
// nothing, and the audit record of a move is written in the same transaction.
//
//   pending ──approve──▶ approved ──activate (environment ready)──▶ active
//      │                    │  ▲                                     │
//      └──deny──▶ denied    │  └─ provisioning failed: stays approved, environment_status = failed, retry by an admin
//                           ├──revoke──▶ revoked ◀──revoke───────────┤
//                           └──expire──▶ expired ◀──expire───────────┘
import type { REQUEST_STATUSES } from '../core/db/schema.ts';

export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export interface Transition {
  from: readonly RequestStatus[];
  to: RequestStatus;
  /** The audit action_type the move records. */
  action: string;
}

export const TRANSITIONS = {
  approve: { from: ['pending'], to: 'approved', action: 'request.approved' },
  deny: { from: ['pending'], to: 'denied', action: 'request.denied' },
  activate: { from: ['approved'], to: 'active', action: 'request.activated' },
  revoke: { from: ['approved', 'active'], to: 'revoked', action: 'request.revoked' },
  expire: { from: ['approved', 'active'], to: 'expired', action: 'request.expired' },
} as const satisfies Record<string, Transition>;

export type Move = keyof typeof TRANSITIONS;

export const canMove = (move: Move, from: RequestStatus): boolean =>
  (TRANSITIONS[move].from as readonly RequestStatus[]).includes(from);

/** States a request never leaves. */
export const TERMINAL: readonly RequestStatus[] = ['denied', 'revoked', 'expired'];

/** Environment status values (`environment_status`), set by the environment providers. */
export const ENVIRONMENT_STATUSES = [
  'provisioning',
  'ready',
  'failed',
  'torn_down',
  'teardown_failed',
] as const;
export type EnvironmentStatus = (typeof ENVIRONMENT_STATUSES)[number];
