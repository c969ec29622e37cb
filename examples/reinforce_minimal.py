"""REINFORCE on Thinkingbox through the plain Gymnasium interface, with a Hugging Face model.

No trainer library: each episode is ``env.reset()`` then ``env.step()`` until it ends;
every model turn's sampled tokens are kept with their log-probabilities, and one
policy-gradient step weighs them by the episode's return minus a running baseline.
The return is the mean of the per-check reward vector (denser than the 0/1 verdict);
pass ``--verdict`` to train on the verdict alone. Episodes are generated train
variants, never the frozen test tasks.

    python examples/reinforce_minimal.py --model Qwen/Qwen3-0.6B --family ST004 --episodes 200
"""

from __future__ import annotations

import argparse
import json

from thinkingbox_env.extras import require_train_extra

require_train_extra("examples/reinforce_minimal.py")  # one line naming the extra, not a ModuleNotFoundError from torch

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

import thinkingbox_env as tb
from thinkingbox_env.agents.transformers_local import parse_hermes


def model_turn(model, tokenizer, messages, tools, max_new_tokens: int, temperature: float):
    """Sample one assistant turn; return its text and the summed log-probability of its tokens (with grad)."""
    prompt = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True,
                                           return_dict=True, enable_thinking=False)["input_ids"]
    prompt_ids = torch.tensor([prompt], device=model.device)
    with torch.no_grad():
        out = model.generate(input_ids=prompt_ids, attention_mask=torch.ones_like(prompt_ids), do_sample=True,
                             temperature=temperature, max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id)
    completion = out[:, prompt_ids.shape[1]:]
    logits = model(input_ids=out).logits[:, prompt_ids.shape[1] - 1:-1].float() / temperature
    logprob = torch.log_softmax(logits, dim=-1).gather(-1, completion.unsqueeze(-1)).sum()
    return tokenizer.decode(completion[0], skip_special_tokens=False), logprob


def to_action(text: str):
    """The model's turn as an env action: its tool calls, or its text as a message to the customer."""
    parsed = parse_hermes(text)
    if parsed["tool_calls"]:
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])}}
                 for i, c in enumerate(parsed["tool_calls"])]
        return {"role": "assistant", "content": parsed["content"] or None, "tool_calls": calls}
    return parsed["content"] or "(no reply)"


def run_episode(env, model, tokenizer, seed: int, max_new_tokens: int, temperature: float):
    obs, _ = env.reset(seed=seed)
    messages, tools = list(obs["messages"]), obs["tools"]
    logprobs = []
    while True:
        text, logprob = model_turn(model, tokenizer, messages, tools, max_new_tokens, temperature)
        logprobs.append(logprob)
        obs, reward, terminated, truncated, info = env.step(to_action(text))
        messages.extend(obs["messages"])  # the env echoes the agent's turn, then tool results or the customer's answer
        if terminated or truncated:
            return info, torch.stack(logprobs).sum()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a causal LM with a tool-calling chat template (hub id or folder)")
    p.add_argument("--domain", default="retail")
    p.add_argument("--family", default="ST004", help="task family whose train variants are played")
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--lr", type=float, default=1e-6)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--max-new-tokens", type=int, default=256, help="per model turn")
    p.add_argument("--max-actions", type=int, default=16, help="the episode is truncated after this many agent actions")
    p.add_argument("--verdict", action="store_true", help="return = verdict (0/1) instead of the mean per-check reward")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", help="folder to save the trained model in")
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model).to("cuda" if torch.cuda.is_available() else "cpu")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    baseline = 0.0
    for episode in range(args.episodes):
        env = tb.make_variant(args.domain, args.family, seed=args.seed * 100_003 + episode, max_actions=args.max_actions)
        info, logprob = run_episode(env, model, tokenizer, episode, args.max_new_tokens, args.temperature)
        ret = float(info["verdict"]) if args.verdict else float(info["reward_vector"].mean())
        loss = -(ret - baseline) * logprob
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        baseline = 0.9 * baseline + 0.1 * ret
        print(json.dumps({"episode": episode, "return": ret, "verdict": info["verdict"], "actions": info["actions"],
                          "finish": info["finish_reason"], "failure": info["failure_category"]}), flush=True)
        env.close()
    if args.output:
        model.save_pretrained(args.output)
        tokenizer.save_pretrained(args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
