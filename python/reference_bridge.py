#!/usr/bin/env python3
"""Witness's bridge to a checkout of the study's reference code (`--prompts reference:PATH`,
docs/prompts.md). It imports the checkout's `bcg_agents` module with stand-ins for vllm and
torch (no model is loaded, no GPU is touched) and builds every prompt with the checkout's
own agent methods, from the agent state Witness sends. Nothing of the reference is copied
here: the wording comes from the user's checkout at run time.

Protocol (JSON lines): argv[1] is the folder that holds bcg_agents.py. The first line out
is {"ready": true, "python": "3.x.y", "awareness": [...]} or {"error": "..."}. Then each line in is one request
and each line out its answer, in order: {"system", "user", "schema"} or {"error"}.
"""
import inspect
import json
import os
import sys
import types

# Methods Witness calls on the checkout's agents, and what it reads from their state.
_NEEDED = ("set_initial_value", "build_decision_prompt", "build_vote_prompt", "decide_next_value",
           "vote_to_terminate", "_record_internal_strategy")


def _stand_ins():
    """Modules the reference imports for inference only; the bridge never runs a model."""
    class _Params:
        def __init__(self, *args, **kwargs):
            self.__dict__.update(kwargs)

    class _NoModel:
        def __init__(self, *args, **kwargs):
            pass

        def generate(self, *args, **kwargs):
            raise RuntimeError("the prompt bridge does not run a model")

    vllm = types.ModuleType("vllm")
    params = types.ModuleType("vllm.sampling_params")
    vllm.LLM, vllm.SamplingParams, vllm.sampling_params = _NoModel, _Params, params
    params.SamplingParams, params.GuidedDecodingParams = _Params, _Params
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    dist = types.ModuleType("torch.distributed")
    dist.is_initialized = lambda: False
    torch.distributed = dist
    for name, module in (("vllm", vllm), ("vllm.sampling_params", params), ("torch", torch), ("torch.distributed", dist)):
        sys.modules[name] = module


def _load(folder):
    sys.dont_write_bytecode = True  # leave the user's checkout as it is
    _stand_ins()
    sys.path.insert(0, folder)
    import bcg_agents  # the checkout's module
    if not hasattr(bcg_agents, "create_agent"):
        raise LookupError("bcg_agents has no create_agent")
    try:
        import config
        model_config = dict(getattr(config, "VLLM_CONFIG", {}))
    except ImportError:
        model_config = {}
    return bcg_agents, model_config


def _check(bcg, model_config):
    for role in ("honest", "byzantine"):
        agent = _new_agent(bcg, model_config, {"id": "agent_0", "role": role, "awareness": "may_exist", "range": [0, 50]})
        missing = [name for name in _NEEDED if not callable(getattr(agent, name, None))]
        if not hasattr(getattr(agent, "state", None), "last_k_rounds"):
            missing.append("state.last_k_rounds")
        if missing:
            raise LookupError("the %s agent (%s) has no %s" % (role, type(agent).__name__, ", ".join(missing)))


def _new_agent(bcg, model_config, req):
    given = {"agent_id": req["id"], "is_byzantine": req["role"] == "byzantine",
             "model_name": model_config.get("model_name", "Qwen/Qwen3-14B"), "model_config": model_config,
             "value_range": tuple(req["range"]), "byzantine_awareness": req["awareness"]}
    # Older commits of the reference have no awareness variants (their prompts are may_exist's).
    accepted = inspect.signature(bcg.create_agent).parameters
    if "byzantine_awareness" not in accepted and req["awareness"] != "may_exist":
        raise LookupError("this checkout's create_agent takes no byzantine_awareness: it has only the may_exist prompts")
    return bcg.create_agent(**{k: v for k, v in given.items() if k in accepted or k in ("agent_id", "is_byzantine")})


def _agent(bcg, model_config, req):
    """An agent of the checkout in the state Witness's engine holds for this question."""
    agent = _new_agent(bcg, model_config, req)
    if req.get("initial_value") is not None:
        agent.set_initial_value(req["initial_value"])
    agent.my_value = req.get("current_value")
    agent.state.last_k_rounds = list(req.get("history", []))
    for round_num, note in req.get("notes", []):
        agent._record_internal_strategy(round_num, note)
    if req["stage"] == "vote":
        agent.received_proposals = [tuple(p) for p in req.get("proposals", [])]
        agent.last_reasoning = req.get("own_reasoning", "")
    return agent


def _retry_prompts(agent, stage, game_state):
    """The prompts of the checkout's own single-agent retry loop, recorded try by try."""
    calls = []

    def record(prompt, schema, temperature=0.0, max_tokens=0, system_prompt=None):
        calls.append((system_prompt, prompt, schema))
        return {"error": "recorded by the prompt bridge"}

    agent.generate_json = record
    (agent.vote_to_terminate if stage == "vote" else agent.decide_next_value)(game_state)
    return calls


def _answer(bcg, model_config, req):
    agent = _agent(bcg, model_config, req)
    game_state = {"round": req["round"], "max_rounds": req["max_rounds"],
                  "rounds_until_deadline": max(0, req["max_rounds"] - req["round"]), "game_over": False}
    attempt = req.get("attempt", 1)
    if attempt <= 1:
        build = agent.build_vote_prompt if req["stage"] == "vote" else agent.build_decision_prompt
        system, user, schema = build(game_state)
    else:
        calls = _retry_prompts(agent, req["stage"], game_state)
        if len(calls) < attempt:
            raise LookupError("the checkout's retry loop made %d tries, not %d" % (len(calls), attempt))
        system, user, schema = calls[attempt - 1]
    return {"system": system, "user": user, "schema": schema}


def main():
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    # The reference prints as it goes: keep its output off the protocol.
    sys.stdout = open(os.devnull, "w")
    sys.stdin.reconfigure(encoding="utf-8")
    try:
        bcg, model_config = _load(sys.argv[1])
        _check(bcg, model_config)
    except Exception as error:  # any import or shape problem of the checkout
        out.write(json.dumps({"error": "%s: %s" % (type(error).__name__, error)}) + "\n")
        out.flush()
        return 1
    variants = ["may_exist", "none_exist"] if "byzantine_awareness" in inspect.signature(bcg.create_agent).parameters else ["may_exist"]
    out.write(json.dumps({"ready": True, "python": sys.version.split()[0], "awareness": variants}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = _answer(bcg, model_config, json.loads(line))
        except Exception as error:
            reply = {"error": "%s: %s" % (type(error).__name__, error)}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
