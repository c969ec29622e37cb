"""Drive one task by hand: ask the customer, look things up, act, and read the verdict."""

import thinkingbox_env as tb

env = tb.make("retail/ST030_001")
obs, info = env.reset(seed=0)
print(obs["messages"][-1]["content"])  # the customer's request

steps = [
    "I can do that. What is the email address on your Brightwell account?",
    {"name": "get_customer_profile", "arguments": {"email": "anders.achterberg98@example.org"}},
    {"name": "search_tickets", "arguments": {"table": "users", "filter": "email eq 'anders.achterberg98@example.org'"}},
    {"name": "get_membership", "arguments": {"customer_id": "CUS-3000001"}},
    {"name": "create_ticket", "arguments": {"requester_id": 3000001, "subject": "Join Brightwell Plus", "category": "membership"}},
    {"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}},
    {"name": "update_ticket", "arguments": {"ticket_id": 50005, "status": "solved"}},
    "You are now a Brightwell Plus member until 2027-03-02. <DONE>",
]
for action in steps:
    obs, reward, terminated, truncated, info = env.step(action)
    for message in obs["messages"]:
        if message["role"] in ("user", "tool"):
            print(f"{message['role']:>5}: {message['content'][:120]}")

print("reward:", reward, "| finish:", info["finish_reason"])
for name, passed in info["checks"].items():
    print(f"  {'PASS' if passed else 'FAIL'}  {name}")
