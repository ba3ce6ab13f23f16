/**
 * @module
 * Deterministic decision layers: rules, modes and the circuit breaker.
 */
export { type Budget, type DecideMode, formatDecideMode, parseDecideMode } from './mode.js';
export { applyRule, RULE_DESCRIPTIONS, RULE_NAMES, type RuleInput, type RuleName, toleratedFaults } from './rules.js';
