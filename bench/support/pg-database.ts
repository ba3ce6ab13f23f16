/** Fresh databases on the local PostgreSQL server for benches, dropped at the end. */
import { openPool } from '../../src/attest/postgres.js';

const ADMIN_URL = process.env.WITNESS_TEST_DATABASE_URL ?? 'postgres:///postgres';
const created: string[] = [];

/** Creates (or recreates) database `name` and returns its URL. */
export async function freshDatabase(name: string): Promise<string> {
  const admin = await openPool(ADMIN_URL, { purpose: 'bench PostgreSQL server', max: 1 });
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  created.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops every database freshDatabase made in this process. */
export async function dropDatabases(): Promise<void> {
  if (created.length === 0) return;
  const admin = await openPool(ADMIN_URL, { purpose: 'bench PostgreSQL server', max: 1 });
  try {
    for (const name of created.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
