/** @module The package version (core/version.ts). */
export { VERSION } from '../core/version.js';
