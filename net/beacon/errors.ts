/** Why a light-client object was rejected: a stable code per rule of the sync protocol, and what failed. */
export type LightClientErrorCode =
  | 'malformed'
  | 'bootstrap_root_mismatch'
  | 'invalid_header'
  | 'invalid_current_committee_branch'
  | 'too_few_participants'
  | 'invalid_slot_order'
  | 'period_not_followable'
  | 'irrelevant_update'
  | 'invalid_finality_branch'
  | 'invalid_next_committee_branch'
  | 'next_committee_mismatch'
  | 'invalid_signature';

export class LightClientError extends Error {
  constructor(readonly code: LightClientErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = 'LightClientError';
  }
}
