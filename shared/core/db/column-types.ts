// Column types drizzle does not have, shared by the schema files.
import { customType } from 'drizzle-orm/pg-core';

/** A 64-bit transaction id (PostgreSQL's xid8), read as its decimal text. */
export const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });
