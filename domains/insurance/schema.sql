-- The ticketing tables (ticket_users, tickets) are not here: they come from the Ticketing that tools.py
-- declares (thinkingbox_env/toolkit/ticketing.py, Ticketing.schema_sql), with this domain's categories and teams.
-- Ashgrove Mutual Insurance: personal auto support backend.
-- Eight systems: ticketing; customer records and identity verification; policy
-- administration (policies, drivers, vehicles, endorsements); motor-vehicle records;
-- billing (accounts, payment arrangements, payments); claims; documents; policy
-- servicing (cancellations, reinstatements). Every table has a primary key; free-text
-- columns that do not carry the outcome of a task are declared volatile in domain.yaml.

-- Customer records. Date of birth, security answer and SSN digits are never shown by a tool.
CREATE TABLE customers (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    phone VARCHAR,
    date_of_birth DATE NOT NULL,
    tier VARCHAR NOT NULL CHECK (tier IN ('standard', 'preferred', 'elite')),
    mailing_state VARCHAR NOT NULL,
    customer_since DATE NOT NULL,
    security_question VARCHAR,
    security_answer VARCHAR,
    ssn_last4 VARCHAR,
    fraud_flag BOOLEAN NOT NULL DEFAULT FALSE
);

-- Identity verification reached in the current conversation, one row per customer.
-- failed_attempts counts calls where a factor did not match; at 3 verification locks
-- for the rest of the conversation, as an identity service locks out a guesser.
CREATE TABLE identity_verifications (
    customer_id VARCHAR PRIMARY KEY,
    level VARCHAR NOT NULL CHECK (level IN ('none', 'partial', 'full')),
    verified_at TIMESTAMP NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0)
);

-- Policy administration.
CREATE TABLE policies (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    state VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'grace_period', 'lapsed', 'pending_cancellation', 'cancelled')),
    effective_date DATE NOT NULL,
    expiration_date DATE NOT NULL,
    annual_premium DECIMAL(10, 2) NOT NULL,
    grace_period_end DATE,
    lapse_date DATE,
    cancellation_date DATE,
    cancel_reason VARCHAR
);

CREATE TABLE drivers (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    full_name VARCHAR NOT NULL,
    date_of_birth DATE NOT NULL,
    license_number VARCHAR NOT NULL,
    license_state VARCHAR NOT NULL,
    relationship VARCHAR NOT NULL CHECK (relationship IN ('self', 'spouse', 'child', 'parent', 'sibling', 'other_household')),
    status VARCHAR NOT NULL CHECK (status IN ('listed', 'excluded', 'removed')),
    effective_date DATE NOT NULL,
    end_date DATE
);

CREATE TABLE vehicles (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    vin VARCHAR NOT NULL,
    year INTEGER,
    make VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    color VARCHAR,
    coverage VARCHAR NOT NULL CHECK (coverage IN ('liability', 'full')),
    lienholder VARCHAR,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'removed')),
    effective_date DATE NOT NULL,
    end_date DATE
);

-- Every driver or vehicle change is logged as an endorsement on the policy.
CREATE TABLE endorsements (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    change_type VARCHAR NOT NULL CHECK (change_type IN ('add_driver', 'remove_driver', 'exclude_driver', 'relist_driver', 'add_vehicle', 'remove_vehicle', 'coverage_change')),
    driver_id VARCHAR,
    vehicle_id VARCHAR,
    effective_date DATE NOT NULL,
    created_at TIMESTAMP NOT NULL,
    -- why a driver or vehicle left the policy (graded exactly: a vehicle sold is not one totaled)
    reason VARCHAR CHECK (reason IN ('left_household', 'own_policy', 'license_surrendered', 'sold', 'traded_in', 'totaled', 'other'))
);

-- Motor-vehicle records (the state licensing agencies' reports, as last pulled).
CREATE TABLE driver_records (
    license_number VARCHAR NOT NULL,
    license_state VARCHAR NOT NULL,
    full_name VARCHAR NOT NULL,
    license_status VARCHAR NOT NULL CHECK (license_status IN ('valid', 'suspended', 'revoked', 'expired')),
    violations_3yr INTEGER NOT NULL,
    at_fault_accidents_3yr INTEGER NOT NULL,
    report_date DATE NOT NULL,
    PRIMARY KEY (license_state, license_number)
);

-- Billing.
CREATE TABLE billing_accounts (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    pay_plan VARCHAR NOT NULL CHECK (pay_plan IN ('full', 'semiannual', 'quarterly', 'monthly')),
    autopay BOOLEAN NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('current', 'past_due', 'extended', 'lapsed', 'closed')),
    due_date DATE NOT NULL,
    amount_due DECIMAL(10, 2) NOT NULL,
    past_due_amount DECIMAL(10, 2) NOT NULL DEFAULT 0,
    paid_to_date DECIMAL(10, 2) NOT NULL DEFAULT 0,
    installment_fee DECIMAL(10, 2) NOT NULL DEFAULT 0
);

CREATE TABLE payment_arrangements (
    id VARCHAR PRIMARY KEY,
    billing_account_id VARCHAR NOT NULL,
    arrangement_type VARCHAR NOT NULL CHECK (arrangement_type IN ('extension', 'installment_plan')),
    previous_due_date DATE,
    new_due_date DATE,
    previous_plan VARCHAR,
    new_plan VARCHAR,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE payments (
    id VARCHAR PRIMARY KEY,
    billing_account_id VARCHAR NOT NULL,
    amount DECIMAL(10, 2) NOT NULL,
    method VARCHAR NOT NULL CHECK (method IN ('card_on_file', 'bank_account_on_file')),
    purpose VARCHAR NOT NULL CHECK (purpose IN ('premium', 'reinstatement')),
    paid_at TIMESTAMP NOT NULL
);

-- Claims.
CREATE TABLE claims (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    vehicle_id VARCHAR NOT NULL,
    driver_id VARCHAR,
    date_of_loss DATE NOT NULL,
    loss_type VARCHAR NOT NULL CHECK (loss_type IN ('collision', 'comprehensive', 'glass')),
    severity VARCHAR NOT NULL CHECK (severity IN ('minor', 'major')),
    injuries BOOLEAN NOT NULL,
    drivable BOOLEAN NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('open', 'closed')),
    description VARCHAR NOT NULL DEFAULT '',
    reported_at TIMESTAMP NOT NULL
);

-- Documents (proof of insurance).
CREATE TABLE documents (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    doc_type VARCHAR NOT NULL CHECK (doc_type IN ('id_card', 'declarations_page')),
    vehicle_id VARCHAR,
    link VARCHAR NOT NULL,
    issued_at TIMESTAMP NOT NULL
);

-- Policy servicing: cancellations and reinstatements.
CREATE TABLE cancellations (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    effective_date DATE NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('sold_vehicle', 'switched_insurer', 'moving_out_of_state', 'other')),
    refund_amount DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('scheduled', 'completed', 'withdrawn')),
    requested_at TIMESTAMP NOT NULL
);

CREATE TABLE reinstatements (
    id VARCHAR PRIMARY KEY,
    policy_id VARCHAR NOT NULL,
    effective_date DATE NOT NULL,
    lapse_days INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL
);
