-- Brightwell Electronics support backend. Every table has a primary key; free-text
-- columns that do not carry the outcome of a task are declared volatile in domain.yaml.

-- Ticketing system: people who contacted support, and their tickets.
CREATE TABLE ticket_users (
    id INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE tickets (
    id INTEGER PRIMARY KEY,
    requester_id INTEGER NOT NULL,
    subject VARCHAR NOT NULL,
    description VARCHAR NOT NULL DEFAULT '',
    category VARCHAR NOT NULL CHECK (category IN ('membership', 'order', 'delivery', 'payment', 'general')),
    priority VARCHAR NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    status VARCHAR NOT NULL CHECK (status IN ('open', 'pending', 'hold', 'solved', 'closed')),
    order_id VARCHAR,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- Customer profiles (CRM). customer_score is internal and confidential.
CREATE TABLE customers (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    phone VARCHAR,
    tier VARCHAR NOT NULL CHECK (tier IN ('standard', 'plus')),
    customer_score INTEGER NOT NULL,
    registration_date DATE NOT NULL,
    lifetime_value DECIMAL(12, 2) NOT NULL DEFAULT 0
);

-- Paid membership (Brightwell Plus).
CREATE TABLE memberships (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    plan VARCHAR NOT NULL CHECK (plan IN ('plus')),
    status VARCHAR NOT NULL CHECK (status IN ('active', 'cancelled')),
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    annual_fee DECIMAL(12, 2) NOT NULL,
    auto_renew BOOLEAN NOT NULL
);

-- Order management.
CREATE TABLE orders (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('processing', 'shipped', 'delivered', 'cancelled')),
    placed_at TIMESTAMP NOT NULL,
    subtotal DECIMAL(12, 2) NOT NULL,
    shipping_fee DECIMAL(12, 2) NOT NULL,
    total DECIMAL(12, 2) NOT NULL,
    shipping_speed VARCHAR NOT NULL CHECK (shipping_speed IN ('standard', 'express')),
    shipping_address VARCHAR NOT NULL,
    cancelled_at TIMESTAMP,
    cancel_reason VARCHAR
);

CREATE TABLE order_items (
    order_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    sku VARCHAR NOT NULL,
    product_name VARCHAR NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price DECIMAL(12, 2) NOT NULL,
    PRIMARY KEY (order_id, line_no)
);

-- Shipments and carrier tracking.
CREATE TABLE shipments (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    carrier VARCHAR NOT NULL,
    tracking_number VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('label_created', 'in_transit', 'delayed', 'exception', 'delivered')),
    promised_date DATE NOT NULL,
    delivered_at TIMESTAMP
);

CREATE TABLE tracking_events (
    shipment_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    event_time TIMESTAMP NOT NULL,
    location VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    PRIMARY KEY (shipment_id, seq)
);

-- Payments, refunds and store credit.
CREATE TABLE payments (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    amount DECIMAL(12, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('captured', 'partially_refunded', 'refunded')),
    captured_at TIMESTAMP NOT NULL
);

CREATE TABLE refunds (
    id VARCHAR PRIMARY KEY,
    payment_id VARCHAR NOT NULL,
    order_id VARCHAR NOT NULL,
    amount DECIMAL(12, 2) NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('order_cancelled', 'duplicate_charge', 'damaged_item', 'goodwill')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE store_credits (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    order_id VARCHAR,
    amount DECIMAL(12, 2) NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('delivery_delay', 'goodwill')),
    created_at TIMESTAMP NOT NULL
);
