-- The ticketing tables (ticket_users, tickets) are not here: they come from the Ticketing that tools.py
-- declares (thinkingbox_env/toolkit/ticketing.py, Ticketing.schema_sql), with this domain's categories and teams.
-- Tidewell Bank: internal IT support backend.
-- Three systems behind one service desk: the HR directory (Crew Directory), identity and
-- access management (Keyring) and IT service management (Harbour Desk: tickets,
-- incidents, hardware assets, procurement, software licences). Every table has a primary
-- key; free-text columns that do not carry a task's outcome are volatile in domain.yaml.

-- ============================================================ HR directory (Crew Directory)
CREATE TABLE departments (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    head_id VARCHAR  -- the department's director, the second procurement approver
);

CREATE TABLE roles (
    id VARCHAR PRIMARY KEY,
    title VARCHAR NOT NULL,
    department_id VARCHAR NOT NULL,
    job_family VARCHAR NOT NULL CHECK (job_family IN ('engineering', 'operations', 'risk', 'finance', 'people', 'support', 'security'))
);

CREATE TABLE employees (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    department_id VARCHAR NOT NULL,
    role_id VARCHAR NOT NULL,
    level INTEGER NOT NULL CHECK (level BETWEEN 1 AND 8),
    manager_id VARCHAR,
    worker_type VARCHAR NOT NULL CHECK (worker_type IN ('employee', 'contractor')),
    status VARCHAR NOT NULL CHECK (status IN ('active', 'on_leave', 'terminated')),
    start_date DATE NOT NULL,
    end_date DATE,
    badge_number VARCHAR NOT NULL,  -- identity factor, never shown by a tool
    date_of_birth DATE NOT NULL,    -- identity factor, never shown by a tool
    mobile_on_file BOOLEAN NOT NULL,
    location VARCHAR NOT NULL
);

CREATE TABLE contractor_contracts (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    agency VARCHAR NOT NULL,
    sponsor_id VARCHAR NOT NULL,  -- the Tidewell employee accountable for the contractor
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'ended'))
);

-- ============================================================ identity and access (Keyring)
CREATE TABLE applications (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL,  -- the application owner, an approver for elevated levels
    classification VARCHAR NOT NULL CHECK (classification IN ('internal', 'confidential', 'restricted')),
    production BOOLEAN NOT NULL
);

CREATE TABLE access_levels (
    app_id VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('read', 'write', 'admin')),
    rank INTEGER NOT NULL,
    approval VARCHAR NOT NULL CHECK (approval IN ('none', 'manager', 'manager_owner', 'manager_owner_security')),
    max_days INTEGER,  -- longest a grant at this level may run; NULL = until revoked
    contractor_allowed BOOLEAN NOT NULL,
    PRIMARY KEY (app_id, level)
);

CREATE TABLE role_defaults (
    role_id VARCHAR NOT NULL,
    app_id VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    PRIMARY KEY (role_id, app_id)
);

CREATE TABLE access_grants (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    app_id VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('read', 'write', 'admin')),
    status VARCHAR NOT NULL CHECK (status IN ('active', 'expired', 'revoked')),
    source VARCHAR NOT NULL CHECK (source IN ('role_default', 'request', 'emergency')),
    request_id VARCHAR,
    incident_id VARCHAR,
    granted_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP
);

CREATE TABLE access_requests (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    app_id VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('read', 'write', 'admin')),
    kind VARCHAR NOT NULL CHECK (kind IN ('new', 'upgrade')),
    grant_id VARCHAR,  -- the grant an upgrade raises
    duration_days INTEGER,
    justification VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('pending_approval', 'approved', 'rejected', 'provisioned', 'cancelled')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE approvals (
    id VARCHAR PRIMARY KEY,
    request_id VARCHAR NOT NULL,
    step VARCHAR NOT NULL CHECK (step IN ('manager', 'app_owner', 'security', 'sponsor')),
    approver_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    requested_at TIMESTAMP NOT NULL,
    decided_at TIMESTAMP
);

CREATE TABLE accounts (
    employee_id VARCHAR PRIMARY KEY,
    username VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'locked', 'disabled')),
    failed_logins INTEGER NOT NULL,
    password_changed_at TIMESTAMP NOT NULL,
    must_change_password BOOLEAN NOT NULL,
    mfa_method VARCHAR NOT NULL CHECK (mfa_method IN ('authenticator_app', 'hardware_key', 'sms', 'none')),
    mfa_enrolled_at TIMESTAMP
);

CREATE TABLE security_actions (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    action VARCHAR NOT NULL CHECK (action IN ('password_reset', 'unlock', 'mfa_reset')),
    detail VARCHAR NOT NULL,  -- delivery channel or new MFA method
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE identity_verifications (
    employee_id VARCHAR PRIMARY KEY,
    status VARCHAR NOT NULL CHECK (status IN ('verified', 'failed')),
    failed_attempts INTEGER NOT NULL,
    verified_at TIMESTAMP NOT NULL
);

-- ============================================================ IT service management (Harbour Desk)

CREATE TABLE incidents (
    id VARCHAR PRIMARY KEY,
    title VARCHAR NOT NULL,
    app_id VARCHAR NOT NULL,
    severity VARCHAR NOT NULL CHECK (severity IN ('SEV1', 'SEV2', 'SEV3', 'SEV4')),
    status VARCHAR NOT NULL CHECK (status IN ('open', 'mitigated', 'resolved')),
    commander_id VARCHAR NOT NULL,
    opened_at TIMESTAMP NOT NULL
);

CREATE TABLE incident_responders (
    incident_id VARCHAR NOT NULL,
    employee_id VARCHAR NOT NULL,
    role VARCHAR NOT NULL CHECK (role IN ('commander', 'responder', 'observer')),
    PRIMARY KEY (incident_id, employee_id)
);

CREATE TABLE asset_models (
    id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL CHECK (kind IN ('laptop', 'monitor', 'dock', 'headset', 'keyboard', 'mouse', 'phone')),
    name VARCHAR NOT NULL,
    unit_price DECIMAL(10, 2) NOT NULL,
    standard BOOLEAN NOT NULL
);

CREATE TABLE assets (
    id VARCHAR PRIMARY KEY,
    model_id VARCHAR NOT NULL,
    serial VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('in_use', 'in_stock', 'in_repair', 'retired')),
    assigned_to VARCHAR,
    assigned_at TIMESTAMP,
    purchased_on DATE NOT NULL,
    warranty_end DATE NOT NULL
);

CREATE TABLE troubleshooting_steps (
    id VARCHAR PRIMARY KEY,
    asset_id VARCHAR NOT NULL,
    step VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL CHECK (outcome IN ('resolved', 'not_resolved')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE procurement_requests (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    item VARCHAR NOT NULL,  -- a hardware model id or a software id
    quantity INTEGER NOT NULL CHECK (quantity >= 1),
    total DECIMAL(10, 2) NOT NULL,
    approval_tier VARCHAR NOT NULL CHECK (approval_tier IN ('manager', 'director', 'finance')),
    approver_id VARCHAR NOT NULL,
    justification VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('pending_approval', 'approved', 'ordered', 'rejected')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE software (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    licence_kind VARCHAR NOT NULL CHECK (licence_kind IN ('free', 'pooled', 'paid_seat')),
    annual_cost DECIMAL(10, 2) NOT NULL,
    contractor_allowed BOOLEAN NOT NULL
);

CREATE TABLE licence_pools (
    id VARCHAR PRIMARY KEY,
    software_id VARCHAR NOT NULL,
    seats_total INTEGER NOT NULL
);

CREATE TABLE licence_assignments (
    id VARCHAR PRIMARY KEY,
    pool_id VARCHAR NOT NULL,
    employee_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'released')),
    assigned_at TIMESTAMP NOT NULL,
    last_used_on DATE
);
