/**
 * @module
 * Public API of `agent-witness/report`: tables (and later HTML) from results files.
 */
export { renderOutcomeTable, renderTable } from './table.js';
