-- obs_sketch_percentiles: generated from shared/observability/duration-sketch.ts (sketchPercentilesFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION obs_sketch_percentiles(s integer[], ps double precision[], dmax integer)
RETURNS double precision[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $percentiles$
DECLARE
  n CONSTANT integer := coalesce(array_length(ps, 1), 0);
  len integer := coalesce(array_length(s, 2), 0);
  total bigint := 0;
  result double precision[] := array_fill(NULL::double precision, ARRAY[n]);
  h double precision;
  lo bigint;
  low double precision;
  high double precision;
  seen bigint;
  i integer;
BEGIN
  FOR i IN 1 .. len LOOP
    total := total + s[2][i];
  END LOOP;
  IF total = 0 THEN
    RETURN result;
  END IF;
  FOR j IN 1 .. n LOOP
    h := ps[j] * (total - 1);
    lo := floor(h);
    low := NULL;
    high := NULL;
    seen := 0;
    FOR i IN 1 .. len LOOP
      seen := seen + s[2][i];
      IF low IS NULL AND seen > lo THEN
        low := obs_sketch_value(s[1][i]);
      END IF;
      IF seen > lo + 1 OR i = len THEN
        high := obs_sketch_value(s[1][i]);
        EXIT;
      END IF;
    END LOOP;
    -- A fraction this small adds nothing at 0.001 ms; times a gap below 1 it would underflow, which PostgreSQL
    -- raises as an error where JavaScript gives 0.
    result[j] := round(least(CASE WHEN h - lo > 1e-300 THEN low + (h - lo) * (high - low) ELSE low END, dmax)::numeric, 3);
  END LOOP;
  RETURN result;
END
$percentiles$;
