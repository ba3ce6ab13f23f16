/**
 * @module
 * Public API of `agent-witness/report`: terminal tables (per cell or pooled across
 * cells) and the HTML report from results files.
 */
export { renderHtmlReport } from './html.js';
export type { HtmlReportOptions } from './html.js';
export { buildReportData, chooseRuns } from './html-data.js';
export type { ReportData } from './html-data.js';
export { groupLabel, POOL_FIELDS, parsePoolFields, poolRuns } from './pool.js';
export type { GroupSummary, GroupValue, PoolField } from './pool.js';
export { pairedJson, renderPairedTable } from './paired-table.js';
export { renderGroupTable, renderOutcomeTable, renderTable } from './table.js';
export type { GroupTableOptions } from './table.js';
