/**
 * @module
 * The field formats every signed record shares, defined once: a SHA-256 digest, an
 * Ed25519 key id and signature, a deployer's name. Each is a zod schema carrying the
 * message a user reads when a field is not in its form; receipts, key files, stream
 * recordings and signed results all check their fields with these.
 */
import { z } from 'zod';

/** 64 lower-case hex digits: how every digest is written. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export const Sha256HexSchema = z.string().regex(SHA256_HEX, 'expected 64 lower-case hex digits (a SHA-256 digest)');

export const Ed25519KeyIdSchema = z.string().regex(/^ed25519:[0-9a-f]{16}$/, 'expected ed25519: and 16 hex digits');

export const Ed25519SignatureSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{86}$/, 'expected a 64-byte Ed25519 signature in unpadded base64url (86 characters)');

/** Printable ASCII only: no confusable Unicode in the names a human compares. */
export const DeployerNameSchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,128}$/, 'expected 1–128 printable ASCII characters without spaces');
