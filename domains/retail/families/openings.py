"""How Brightwell customers open a conversation, per family, written as customers write.

Each family has at least six templates: some give the order number (or email)
up front, some carry an emotion or a preferred outcome, some are vague first
requests the agent has to clarify. The templates named in ``held_out`` are drawn
only for test tasks, so the test split measures requests worded in ways training
never saw. Placeholders are filled from the task's own facts ({order}, {email},
{product}, ...), so an opening can never contradict the facts that decide the branch.
"""

from __future__ import annotations

from thinkingbox_env.authoring import Openings

ST001 = Openings("ST001", {
    "plain": "I need to cancel an order I placed a couple of days ago.",
    "upfront_id": "Please cancel order {order}, I ordered the wrong thing.",
    "upset": "Ugh, I ordered the {product} by mistake and I'm annoyed at myself. Can you cancel it?",
    "prefers": "I'd like to cancel my recent order and get the money back on my card.",
    "vague": "hi, something's wrong with an order I made, can you help",
    "two_facts": "Hello, this is about order {order} on my account {email}. I want to cancel it.",
    "vague_b": "I changed my mind about something I bought from you this week.",
    "upset_b": "Your site let me order the wrong model again! Cancel the {product} order please.",
    "ref_b": "Order {order} - I need it cancelled please, I found it cheaper elsewhere.",
}, held_out=("vague_b", "upset_b", "ref_b"))

ST002 = Openings("ST002", {
    "plain": "I think I was charged twice for my last order. Can you check?",
    "upfront_id": "My card shows two charges for order {order}. Please look into it.",
    "upset": "I just checked my bank statement and you've taken the money twice! I want this fixed.",
    "prefers": "There's a double charge on my card for one order; I'd like the extra one refunded to the card.",
    "vague": "Something looks off on my card statement.",
    "two_facts": "Account {email}, order {order}: I'm seeing two payments for it.",
    "statement_b": "My banking app lists two payments to Brightwell on the same day for what should be one order. Is that right?",
    "upset_b": "Charging me twice for one order is not OK. Please sort it out.",
    "ref_b": "Hi, order {order} seems to have been paid for twice. Can you check my payments?",
}, held_out=("statement_b", "upset_b", "ref_b"))

ST003 = Openings("ST003", {
    "plain": "My order still hasn't arrived and it was supposed to be here days ago. What's going on?",
    "upfront_id": "Order {order} was due days ago and the tracking hasn't moved. Where is it?",
    "upset": "I'm really frustrated: my {product} is late and nobody tells me anything.",
    "prefers": "My parcel is late. I'd like to know where it is, and I think some compensation would be fair.",
    "vague": "Hi, any news on my delivery?",
    "two_facts": "Hello, {email} here, about order {order}: the delivery date has passed.",
    "gift_b": "I needed the {product} for a birthday this weekend and it still isn't here. What's happening?",
    "vague_b": "The tracking page hasn't changed in days.",
    "ref_b": "Hello, this is {email}. Order {order} should have come already; can you chase it?",
}, held_out=("gift_b", "vague_b", "ref_b"))

ST004 = Openings("ST004", {
    "plain": "Hi, I opened a ticket about a late parcel. Any update?",
    "upfront_id": "Following up on ticket {ticket} about order {order}. What's the status?",
    "upset": "I reported my late parcel days ago and heard nothing back. What is happening with my ticket?",
    "prefers": "Can you check my delivery ticket? If the parcel has arrived you can close it.",
    "vague": "Just checking in on something I reported.",
    "two_facts": "My email is {email} and the ticket is {ticket}. Is there news on the delivery?",
    "polite_b": "Sorry to chase, but is there any progress on the delivery problem I reported?",
    "vague_b": "What's the latest on my case?",
    "ref_b": "Ticket {ticket}: any progress? It's about order {order}.",
}, held_out=("polite_b", "vague_b", "ref_b"))

ST005 = Openings("ST005", {
    "plain": "My tracking page says there's an exception with my parcel. What does that mean?",
    "upfront_id": "Tracking for order {order} shows an exception. What happened?",
    "upset": "The carrier says there's a problem with my {product} delivery and I'm worried it's broken. What now?",
    "prefers": "Something went wrong with my delivery; I just want my {product}, whatever it takes.",
    "vague": "Hi, the carrier shows a problem with my delivery.",
    "two_facts": "{email} here. Order {order} has an 'exception' status on the tracking page.",
    "worried_b": "I got a carrier notice about my parcel that I don't understand. Is my order OK?",
    "vague_b": "Tracking says exception. Help?",
    "ref_b": "Order {order}: the tracking says 'exception'. Is my {product} OK?",
}, held_out=("worried_b", "vague_b", "ref_b"))

ST006 = Openings("ST006", {
    "plain": "Tracking says my order was delivered, but I never got it.",
    "upfront_id": "Order {order} shows as delivered but there's nothing here.",
    "upset": "Your carrier marked my {product} as delivered and it's not here. This is really stressful.",
    "prefers": "My parcel says delivered but never came. I'd like a replacement if possible.",
    "vague": "Hi, I have a problem with a delivery.",
    "two_facts": "Email {email}, order {order}: it says delivered but I have nothing.",
    "neighbour_b": "The tracking says my parcel was dropped off, but nothing ever reached my door.",
    "vague_b": "Where's my stuff? It says it arrived.",
    "ref_b": "Re order {order}: marked delivered, not received. What now?",
}, held_out=("neighbour_b", "vague_b", "ref_b"))

ST007 = Openings("ST007", {
    "plain": "The tracking for my order says it was returned to the sender. I still want it!",
    "upfront_id": "Order {order} was sent back to you. Please get it to me.",
    "upset": "Why on earth was my {product} sent back? I was waiting for it.",
    "prefers": "My parcel bounced back to your warehouse. Please send it out again, I'd rather not reorder.",
    "vague": "Something happened with my delivery, it didn't come.",
    "two_facts": "Hi, {email} here. Order {order} shows 'returned to sender'.",
    "confused_b": "Tracking says the address wasn't found, but I've lived here for years.",
    "vague_b": "My package went back? How?",
    "ref_b": "Order {order} apparently went back to your warehouse. Can you send it again?",
}, held_out=("confused_b", "vague_b", "ref_b"))

ST008 = Openings("ST008", {
    "plain": "I'd like to return something from a recent order.",
    "upfront_id": "I want to return items from order {order}.",
    "upset": "I'm disappointed with what I bought and want to send it back.",
    "prefers": "I'd like to return a purchase and get the refund on my card, please.",
    "vague": "Hi, how do I send back an item I bought from you?",
    "two_facts": "Account {email}, order {order}: I need to start a return.",
    "doubt_b": "I'm not sure I want to keep what I ordered. Can I still send it back?",
    "vague_b": "Return question.",
    "ref_b": "Hi, I'd like to send back items from order {order}, what are my options?",
}, held_out=("doubt_b", "vague_b", "ref_b"))

ST009 = Openings("ST009", {
    "plain": "I'd like to swap the {product} I bought for a different one.",
    "upfront_id": "Can I exchange the {product} from order {order}?",
    "upset": "The {product} I got is not the one I wanted, which is annoying. Can I swap it?",
    "prefers": "I'd like to exchange my {product} rather than return it.",
    "vague": "Hi, I want to change something I bought.",
    "two_facts": "Hi, {email} here; order {order}. I want to exchange the {product}.",
    "colour_b": "The {product} isn't quite what I had in mind. Could I get the other version instead?",
    "vague_b": "Exchange possible?",
    "ref_b": "Order {order}: could the {product} be swapped for the other version?",
}, held_out=("colour_b", "vague_b", "ref_b"))

ST010 = Openings("ST010", {
    "plain": "My {product} isn't working anymore. What can you do?",
    "upfront_id": "The {product} from order {order} has a problem.",
    "upset": "I'm fed up: my {product} already needs sorting out.",
    "prefers": "My {product} has a problem and I'd like it fixed or replaced.",
    "vague": "I have a problem with something I bought from you.",
    "two_facts": "{email}, order {order}: my {product} needs looking at.",
    "worried_b": "Is my {product} still covered by anything? Something's wrong with it.",
    "vague_b": "Broken product, need help.",
    "ref_b": "My {product} (order {order}) isn't working properly any more. What are my options?",
}, held_out=("worried_b", "vague_b", "ref_b"))

ST011 = Openings("ST011", {
    "plain": "The {product} I got isn't in perfect condition.",
    "upfront_id": "The {product} in order {order} arrived with a mark on it.",
    "upset": "I paid full price for my {product} and it arrived with damage on it. Not happy.",
    "prefers": "My new {product} has a flaw, but I'd rather keep it than send it back.",
    "vague": "My new {product} arrived with a flaw.",
    "two_facts": "Hi, {email}, order {order}: there's a cosmetic problem with my {product}.",
    "fair_b": "My {product} works, it just doesn't look new. Is there anything you can do?",
    "vague_b": "Item arrived damaged-ish.",
    "ref_b": "Order {order}: my {product} came with a visible mark on it.",
}, held_out=("fair_b", "vague_b", "ref_b"))

ST012 = Openings("ST012", {
    "plain": "Hi, I'd like to {request} for my {product}.",
    "upfront_id": "About order {order}: I'd like to {request}.",
    "upset": "This installation business for my {product} has been a hassle. I need to {request}.",
    "prefers": "I want to {request} for my {product}, today if possible.",
    "vague": "Question about an installer appointment.",
    "two_facts": "Hi, {email} here, order {order}: I'd like to {request}.",
    "polite_b": "Hello, could you help me {request} for the {product}, please?",
    "vague_b": "Installer question.",
    "ref_b": "Regarding order {order}, I'd like to {request}.",
}, held_out=("polite_b", "vague_b", "ref_b"))

ST013 = Openings("ST013", {
    "plain": "I need to cancel an order I placed.",
    "upfront_id": "Please cancel order {order}.",
    "upset": "I've changed my mind about the {product} and I'm stressed about the money. Please cancel it.",
    "prefers": "Please cancel my order for the {product} and refund me.",
    "vague": "I don't want my order anymore.",
    "two_facts": "Account {email}: I'd like to cancel order {order}.",
    "budget_b": "I can't afford the {product} after all. Can you stop the order?",
    "vague_b": "Cancel please.",
    "ref_b": "Order {order} needs to be cancelled, please.",
}, held_out=("budget_b", "vague_b", "ref_b"))

ST014 = Openings("ST014", {
    "plain": "I'd like to {request} on my order.",
    "upfront_id": "Can you {request} on order {order}?",
    "upset": "I just realised my order won't work as it is, please {request} quickly!",
    "prefers": "Can you {request} before my order ships? I'll pay if there's a fee.",
    "vague": "Question about my delivery options.",
    "two_facts": "{email} here, order {order}: please {request}.",
    "moving_b": "Plans changed for me this week. Could you {request} on my order?",
    "vague_b": "Can I still change my order?",
    "ref_b": "Order {order}: is it still possible to {request}?",
}, held_out=("moving_b", "vague_b", "ref_b"))

ST015 = Openings("ST015", {
    "plain": "My promo code didn't work on my last order. Can you fix the price?",
    "upfront_id": "The code {code} didn't apply on order {order}.",
    "upset": "I was promised a discount and didn't get it. That's not fair.",
    "prefers": "My discount code didn't apply at checkout; I'd like the difference back on my card.",
    "vague": "I used a discount code at checkout but wasn't given the discount.",
    "two_facts": "Hi, {email} here. Order {order}: my code {code} wasn't taken off.",
    "ad_b": "I saw your {code} promotion and the checkout didn't give it to me.",
    "vague_b": "Discount missing.",
    "ref_b": "Order {order}: the code {code} should have taken money off.",
}, held_out=("ad_b", "vague_b", "ref_b"))

ST016 = Openings("ST016", {
    "plain": "Hi, I'd like to {request}.",
    "upfront_id": "Account {email}: I'd like to {request}.",
    "upset": "I'm a bit annoyed with my account, to be honest. I want to {request}.",
    "prefers": "Could you {request}? I'd like it settled today.",
    "vague": "Question about my Brightwell account.",
    "two_facts": "Hi, my email is {email}. I want to {request}.",
    "polite_b": "Hello, could you help me {request}, please?",
    "vague_b": "Points and membership stuff.",
    "ref_b": "This is {email}. Could you {request}?",
}, held_out=("polite_b", "vague_b", "ref_b"))

ST017 = Openings("ST017", {
    "plain": "I still haven't received the refund for the order I cancelled.",
    "upfront_id": "Where is my refund for order {order}? It's not on my card yet.",
    "upset": "I cancelled my order and my money still isn't back. This is getting ridiculous.",
    "prefers": "My refund hasn't arrived. I'd like it traced if there's a problem.",
    "vague": "Following up about money you owe me.",
    "two_facts": "{email}, order {order}: the refund isn't on my card.",
    "bank_b": "My bank says nothing has come in from Brightwell yet for my cancelled order.",
    "vague_b": "Refund??",
    "ref_b": "Order {order} was cancelled but my refund is nowhere to be seen.",
}, held_out=("bank_b", "vague_b", "ref_b"))

ST030 = Openings("ST030", {
    "plain": "I'd like to sign up for Brightwell Plus for the free shipping and reward points. Can you upgrade my account?",
    "upfront_id": "Please upgrade {email} to Brightwell Plus.",
    "upset": "I keep hearing Plus saves money and I feel I'm missing out. Can I get it?",
    "prefers": "I want to join Brightwell Plus and pay the yearly fee today.",
    "vague": "Tell me about your membership thing, I'd like it.",
    "two_facts": "Hi, I'm {name} ({email}); I'd like Brightwell Plus.",
    "friend_b": "A friend told me Plus saves money on delivery. Can you add it to my account?",
    "vague_b": "Plus please.",
    "ref_b": "How do I get Brightwell Plus on my account? I order from you a lot.",
}, held_out=("friend_b", "vague_b", "ref_b"))

# two requests in one message: {requests} names both, in the order they are to be handled, in the customer's words
ST031 = Openings("ST031", {
    "plain": "Hi, {requests}",
    "upset": "It's been a frustrating week with your orders: {requests} Can we sort both out?",
    "prefers": "Hello. {Requests} I'd like both handled in this chat, please.",
    "email_first": "Hello, {email} here. {Requests}",
    "signed": "Hi there, {requests} Thanks, {name}",
    "hopeful": "Hoping you can help with two things today: {requests}",
    "busy_b": "I'm short on time, so in one go: {requests}",
    "ref_b": "Hi, this is {email}. {Requests} Which can you do first?",
    "polite_b": "Good afternoon, sorry to bother you, but {requests} Thank you so much.",
    "apology_b": "Sorry, this is a bit of a list: {requests}",
}, held_out=("busy_b", "ref_b", "polite_b", "apology_b"))
