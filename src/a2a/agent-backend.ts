/**
 * @module
 * Which backend answers a child agent's tasks, from its name and the options it takes
 * (`--agent`, `--endpoint`, `--model`): the one choice `witness a2a serve`, `witness a2a
 * bench` (before it starts anything) and E12's child process make. An option the chosen
 * backend would not use is refused, never ignored.
 */
import { WitnessError } from '../core/errors.js';
import { type AgentBackend, policyBackend } from './agent.js';
import { embeddedBackend, openAiCompatibleBackend } from './llm-backend.js';

/** The backends a child can run: model-free, an OpenAI-compatible server, a local GGUF file. */
export const AGENT_BACKENDS = ['policy', 'llm', 'embedded'] as const;

export interface AgentBackendChoice {
  agent: string;
  /** For `llm`: the OpenAI-compatible base URL. */
  endpoint?: string | undefined;
  /** For `llm`: the model name; for `embedded`: the GGUF file. */
  model?: string | undefined;
}

/** The backend `choice` names; a USAGE error when an option is missing or does not apply. */
export function chooseAgentBackend(choice: AgentBackendChoice): AgentBackend {
  const { agent, endpoint, model } = choice;
  if (endpoint !== undefined && agent !== 'llm')
    throw new WitnessError(
      'USAGE',
      `--endpoint applies only to --agent llm; --agent ${agent} would not use it. Drop it, or add --agent llm.`,
    );
  if (model !== undefined && agent === 'policy')
    throw new WitnessError(
      'USAGE',
      '--model applies only to --agent llm or embedded; the policy agent uses no model. Drop it, or choose --agent llm or embedded.',
    );
  if (agent === 'policy') return policyBackend;
  if (agent === 'llm') {
    if (!endpoint || !model)
      throw new WitnessError(
        'USAGE',
        '--agent llm needs --endpoint URL (OpenAI-compatible, e.g. http://127.0.0.1:8000/v1) and --model NAME.',
      );
    return openAiCompatibleBackend({ endpoint, model });
  }
  if (agent === 'embedded') {
    if (!model) throw new WitnessError('USAGE', '--agent embedded needs --model FILE.gguf (a local model file).');
    return embeddedBackend({ modelPath: model });
  }
  throw new WitnessError('USAGE', `--agent ${agent} is unknown; use policy, llm or embedded.`);
}
