// The audit hash chain as data, without a database: what a record's hash covers, how records link, and the walk
// that checks a sequence of records (and the anchors kept outside the service) in seq order. The service's verify
// (audit.ts, verifyAuditChain) and the auditor's standalone command (scripts/audit-verify.ts) both walk with it.
import { createHash } from 'node:crypto';
import { canonicalize } from '../core/canonical-json.ts';

/** The fields a record's content hash covers, as hashed (the `record` of an export line). */
export interface AuditContent {
  id: string;
  actionType: string;
  actorEmail: string;
  actorId: string;
  appName: string;
  containerId: string;
  environmentId: string;
  environmentName: string;
  ipAddress: string;
  level: string;
  resourceId: string;
  resourceType: string;
  stage: string;
  source: string;
  /** ISO 8601 UTC, to the millisecond. */
  timestamp: string;
  createdAt: string;
  metadata: Record<string, unknown>;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A record's hash: SHA-256 (hex) of the previous record's hash ("" for the first), ":", and its content's hash. */
export const chainedHash = (prevHash: string, content: AuditContent): string =>
  sha256Hex(`${prevHash}:${sha256Hex(canonicalize(content))}`);

/** A point of the chain: a record's seq and hash, and when it was stored. */
export interface ChainPoint {
  seq: number;
  hash: string;
  created_at: string;
}

/** One record as the walk sees it: stored seq, links and content. */
export interface ChainRecord {
  seq: number;
  prevHash: string;
  hash: string;
  content: AuditContent;
}

/** The first record that does not verify. */
export interface BrokenRecord {
  id: string;
  seq: number;
  timestamp: string;
  /** content: its fields no longer give its hash; link: its prev_hash is not the previous record's hash. */
  reason: 'content' | 'link';
}

/** What an anchor says: the chain's head at the time, signed (anchors/anchor.ts). */
export interface AnchoredHead {
  /** The anchor's object key. */
  key: string;
  seq: number;
  hash: string;
  /** Records in the chain up to and including seq. */
  count: number;
}

/** The first anchor the chain does not pass through. */
export interface AnchorMismatch {
  key: string;
  seq: number;
  /**
   * hash: the chain's record at seq has another hash (history up to it was rewritten); count: the chain has another
   * number of records up to seq; missing: the chain has no record at seq (removed, or the records end before it);
   * signature: the anchor's signature or key does not verify.
   */
  reason: 'hash' | 'count' | 'missing' | 'signature';
  /** The seq of the last anchor the chain passes through before this one (0: none): the change is after it. */
  after_seq: number;
}

export interface AnchorResults {
  /** Where the anchors are read from (a directory or s3://bucket/prefix). */
  location: string;
  /** Anchors the chain was compared with (up to the first mismatch, or the break). */
  checked: number;
  first_mismatch: AnchorMismatch | null;
}

/**
 * Walks records in seq order from the start of the chain (or from a verified point), recomputing each hash and
 * link, and compares the chain with each anchor (sorted by seq) as it passes it. Push records with `step` until it
 * returns a broken record; `finish` then tells the anchors the chain never reached.
 */
export class ChainWalk {
  checked = 0;
  head: ChainPoint | null = null;
  broken: BrokenRecord | null = null;
  private prev: string;
  private count: number;
  private next = 0;
  private lastMatched = 0;
  private anchorsChecked = 0;
  private mismatch: AnchorMismatch | null;
  private readonly anchors: readonly AnchoredHead[];

  constructor(
    anchors: readonly AnchoredHead[] = [],
    from: { hash: string; count: number } = { hash: '', count: 0 },
    /** An anchor that already failed its signature check: no anchor after it is trusted. */
    badSignature: AnchoredHead | null = null,
  ) {
    this.prev = from.hash;
    this.count = from.count;
    this.mismatch = badSignature && {
      key: badSignature.key,
      seq: badSignature.seq,
      reason: 'signature',
      after_seq: 0,
    };
    this.anchors = badSignature ? anchors.filter((a) => a.seq < badSignature.seq) : anchors;
  }

  /** Checks one record; returns it as broken when it is the first that does not verify. */
  step(record: ChainRecord): BrokenRecord | null {
    if (this.broken) return this.broken;
    const expected = chainedHash(this.prev, record.content);
    if (record.prevHash !== this.prev || record.hash !== expected) {
      this.broken = {
        id: record.content.id,
        seq: record.seq,
        timestamp: record.content.timestamp,
        reason: record.prevHash !== this.prev ? 'link' : 'content',
      };
      return this.broken;
    }
    this.prev = record.hash;
    this.count++;
    this.checked++;
    this.head = { seq: record.seq, hash: record.hash, created_at: record.content.createdAt };
    for (let anchor = this.anchors[this.next]; anchor && anchor.seq <= record.seq; ) {
      if (!this.mismatch) {
        const reason =
          anchor.seq < record.seq
            ? 'missing'
            : anchor.hash !== record.hash
              ? 'hash'
              : anchor.count !== this.count
                ? 'count'
                : null;
        this.anchorsChecked++;
        if (reason) this.mismatch = { key: anchor.key, seq: anchor.seq, reason, after_seq: this.lastMatched };
        else this.lastMatched = anchor.seq;
      }
      anchor = this.anchors[++this.next];
    }
    return null;
  }

  /** The anchors' results once every record was pushed: an anchor past the chain's end is a missing record. */
  anchorResults(location: string): AnchorResults {
    const past = this.anchors[this.next];
    if (!this.mismatch && !this.broken && past) {
      this.anchorsChecked++;
      this.mismatch = { key: past.key, seq: past.seq, reason: 'missing', after_seq: this.lastMatched };
    }
    return { location, checked: this.anchorsChecked, first_mismatch: this.mismatch };
  }
}
