// Where the stored events stop: a read whose range reaches before the retention cutoff carries archived_before and
// archive_location (docs/observability.md, Retention), and the page says so in words, never a silent empty page.
import { formatTime } from './load.tsx';

export interface Retention {
  archived_before?: string;
  archive_location?: string | null;
}

/** How to read the archive at `location`: Athena for S3, the files for a directory. */
const howToRead = (location: string, by: string) =>
  location.startsWith('s3://')
    ? `Parquet; query them${by} with Athena through the Glue table agent_control_plane_archive.events, see docs/observability.md, Retention and Archive`
    : 'Parquet files by dt=YYYY-MM-DD/hour=HH, see docs/observability.md, Archive';

/**
 * The notice of a read that carries archived_before (nothing otherwise). A list's range reaches before the cutoff;
 * a session's earlier events may have been in a day that retention dropped (the database cannot tell).
 */
export function RetentionNotice({
  retention,
  id,
  kind = 'list',
}: {
  retention: Retention;
  id: string;
  kind?: 'list' | 'session';
}) {
  const before = retention.archived_before;
  if (!before) return null;
  const location = retention.archive_location ?? null;
  const cutoff = (
    <time dateTime={before} class="retention-cutoff">
      {formatTime(before)}
    </time>
  );
  return (
    <p class="retention-notice" id={id} role="note" data-archived-before={before}>
      {kind === 'list' ? (
        <>Events before {cutoff} are past the event retention window and no longer stored in the database</>
      ) : (
        <>
          Earlier events of this session may have been before {cutoff}, past the event retention window: those
          are no longer stored in the database, and the totals count the stored events only
        </>
      )}
      {location ? (
        <>
          . They are in the archive at <code class="archive-location">{location}</code> (
          {howToRead(location, kind === 'session' ? ' by session_id' : '')}).
        </>
      ) : (
        <>. No archive is configured, so retention deletes them.</>
      )}
    </p>
  );
}
