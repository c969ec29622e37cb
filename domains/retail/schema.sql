-- The ticketing tables (ticket_users, tickets) are not here: they come from the Ticketing that tools.py
-- declares (thinkingbox_env/toolkit/ticketing.py, Ticketing.schema_sql), with this domain's categories and teams.
-- Brightwell Electronics support backend. Every table has a primary key; free-text
-- columns that do not carry the outcome of a task are declared volatile in domain.yaml.

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
    status VARCHAR NOT NULL CHECK (status IN ('label_created', 'in_transit', 'delayed', 'exception', 'delivered', 'returned_to_sender')),
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
    reason VARCHAR NOT NULL CHECK (reason IN ('order_cancelled', 'duplicate_charge', 'damaged_item', 'goodwill',
                                              'returned_item', 'price_adjustment', 'installation_cancelled', 'item_not_received')),
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

-- Charges made after checkout (express upgrades, reship fees, late installation cancellations).
CREATE TABLE charges (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    amount DECIMAL(12, 2) NOT NULL CHECK (amount > 0),
    reason VARCHAR NOT NULL CHECK (reason IN ('express_upgrade', 'reship_fee', 'late_cancellation')),
    created_at TIMESTAMP NOT NULL
);

-- Product catalog and inventory.
CREATE TABLE products (
    sku VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    category VARCHAR NOT NULL CHECK (category IN ('tv', 'audio', 'major_appliance', 'small_appliance', 'computer', 'networking', 'accessory', 'service')),
    price DECIMAL(12, 2) NOT NULL,
    variant_group VARCHAR NOT NULL,
    installable BOOLEAN NOT NULL
);

CREATE TABLE inventory (
    sku VARCHAR PRIMARY KEY,
    on_hand INTEGER NOT NULL CHECK (on_hand >= 0),
    restock_date DATE
);

-- Returns and exchanges (RMA).
CREATE TABLE returns (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('return', 'exchange')),
    reason VARCHAR NOT NULL CHECK (reason IN ('changed_mind', 'defective', 'wrong_item', 'wrong_variant')),
    status VARCHAR NOT NULL CHECK (status IN ('approved', 'refunded', 'rejected')),
    item_total DECIMAL(12, 2) NOT NULL,
    restocking_fee DECIMAL(12, 2) NOT NULL,
    return_shipping_fee DECIMAL(12, 2) NOT NULL,
    removal_fee DECIMAL(12, 2) NOT NULL,
    refund_amount DECIMAL(12, 2) NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE return_items (
    return_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    sku VARCHAR NOT NULL,
    opened BOOLEAN NOT NULL,
    PRIMARY KEY (return_id, line_no)
);

-- Warranty contracts (manufacturer warranty, protection plans) and claims.
CREATE TABLE warranty_contracts (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    plan VARCHAR NOT NULL CHECK (plan IN ('manufacturer', 'protection_plan')),
    covers_accidental BOOLEAN NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL
);

CREATE TABLE warranty_claims (
    id VARCHAR PRIMARY KEY,
    contract_id VARCHAR NOT NULL,
    issue VARCHAR NOT NULL CHECK (issue IN ('defect', 'accidental_damage')),
    resolution VARCHAR NOT NULL CHECK (resolution IN ('repair', 'replace')),
    status VARCHAR NOT NULL CHECK (status IN ('open', 'closed')),
    created_at TIMESTAMP NOT NULL
);

-- Installation jobs for installable products.
CREATE TABLE installations (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('install', 'revisit')),
    status VARCHAR NOT NULL CHECK (status IN ('scheduled', 'completed', 'cancelled')),
    scheduled_date DATE NOT NULL,
    completed_at TIMESTAMP,
    fee DECIMAL(12, 2) NOT NULL
);

-- Promotions and the discounts applied to orders.
CREATE TABLE promotions (
    code VARCHAR PRIMARY KEY,
    description VARCHAR NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('percent', 'amount')),
    value DECIMAL(12, 2) NOT NULL,
    min_subtotal DECIMAL(12, 2) NOT NULL,
    stackable BOOLEAN NOT NULL,
    plus_only BOOLEAN NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE NOT NULL
);

CREATE TABLE discount_applications (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    amount DECIMAL(12, 2) NOT NULL,
    source VARCHAR NOT NULL CHECK (source IN ('checkout', 'adjustment')),
    created_at TIMESTAMP NOT NULL
);

-- Reward points ledger (Brightwell Plus earns double).
CREATE TABLE reward_points (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    points INTEGER NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('purchase', 'adjustment', 'redemption')),
    order_id VARCHAR,
    created_at TIMESTAMP NOT NULL
);

-- Membership fee refunds.
CREATE TABLE membership_refunds (
    id VARCHAR PRIMARY KEY,
    membership_id VARCHAR NOT NULL,
    amount DECIMAL(12, 2) NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- Replacement and reship orders, and carrier investigations.
CREATE TABLE replacement_orders (
    id VARCHAR PRIMARY KEY,
    order_id VARCHAR NOT NULL,
    sku VARCHAR NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('missing', 'damaged_in_transit', 'returned_to_sender', 'exchange')),
    shipping_address VARCHAR NOT NULL,
    reship_fee DECIMAL(12, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('processing', 'backordered')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE carrier_investigations (
    id VARCHAR PRIMARY KEY,
    shipment_id VARCHAR NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('missing', 'damaged')),
    status VARCHAR NOT NULL CHECK (status IN ('open', 'closed')),
    created_at TIMESTAMP NOT NULL
);
