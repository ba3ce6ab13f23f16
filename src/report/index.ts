/**
 * @module
 * Public API of `agent-witness/report`: terminal tables and the HTML report from
 * results files.
 */
export { renderHtmlReport } from './html.js';
export type { HtmlReportOptions } from './html.js';
export { buildReportData, chooseRuns } from './html-data.js';
export type { ReportData } from './html-data.js';
export { renderOutcomeTable, renderTable } from './table.js';
