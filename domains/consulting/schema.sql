-- The ticketing tables (ticket_users, tickets) are not here: they come from the Ticketing that tools.py
-- declares (thinkingbox_env/toolkit/ticketing.py, Ticketing.schema_sql), with this domain's categories and teams.
-- Halcrow & Vine Advisory service desk backend: eighteen small systems that must agree
-- with each other. Every table has a primary key; free text that does not carry the
-- outcome of a task is declared volatile in domain.yaml.

-- HR directory. delegate_id approves in the employee's place while they are on leave.
CREATE TABLE employees (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('analyst', 'consultant', 'senior_consultant', 'manager', 'principal', 'partner')),
    practice VARCHAR NOT NULL CHECK (practice IN ('technology', 'strategy', 'data', 'people')),
    role VARCHAR NOT NULL CHECK (role IN ('developer', 'analyst', 'designer', 'advisor', 'leader')),
    office VARCHAR NOT NULL,
    manager_id VARCHAR,
    delegate_id VARCHAR,
    status VARCHAR NOT NULL CHECK (status IN ('onboarding', 'active', 'leave')),
    start_date DATE NOT NULL
);

-- Onboarding tracker: one row per joiner, phases in a fixed order.
CREATE TABLE onboarding (
    employee_id VARCHAR PRIMARY KEY,
    phase VARCHAR NOT NULL CHECK (phase IN ('preboarding', 'accounts', 'training', 'equipped', 'complete')),
    updated_at TIMESTAMP NOT NULL
);

-- Engagements and staffing.
CREATE TABLE clients (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    sector VARCHAR NOT NULL
);

CREATE TABLE engagements (
    id VARCHAR PRIMARY KEY,
    client_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'closed')),
    lead_id VARCHAR NOT NULL,
    partner_id VARCHAR NOT NULL,
    billable BOOLEAN NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL
);

CREATE TABLE staffing (
    employee_id VARCHAR NOT NULL,
    engagement_id VARCHAR NOT NULL,
    allocation INTEGER NOT NULL CHECK (allocation BETWEEN 0 AND 100),
    status VARCHAR NOT NULL CHECK (status IN ('active', 'ended')),
    PRIMARY KEY (employee_id, engagement_id)
);

-- Client systems and the compliance records their access depends on.
CREATE TABLE client_systems (
    id VARCHAR PRIMARY KEY,
    client_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    clearance_required VARCHAR NOT NULL CHECK (clearance_required IN ('none', 'baseline', 'enhanced')),
    background_check_required BOOLEAN NOT NULL,
    vpn_required BOOLEAN NOT NULL
);

CREATE TABLE access_grants (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    system_id VARCHAR NOT NULL,
    engagement_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'revoked')),
    expires_on DATE NOT NULL,
    granted_at TIMESTAMP NOT NULL
);

CREATE TABLE ndas (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    client_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('sent', 'signed', 'expired')),
    sent_at TIMESTAMP NOT NULL,
    signed_on DATE
);

CREATE TABLE clearances (
    employee_id VARCHAR PRIMARY KEY,
    level VARCHAR NOT NULL CHECK (level IN ('none', 'baseline', 'enhanced')),
    valid_to DATE
);

CREATE TABLE background_checks (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('requested', 'in_progress', 'cleared', 'failed')),
    requested_at TIMESTAMP NOT NULL,
    completed_on DATE
);

-- Client VPN gateway: one profile per employee and client.
CREATE TABLE vpn_profiles (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    client_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'disabled')),
    expires_on DATE NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- Document store: engagement folders, who may open them, and the access log.
CREATE TABLE doc_folders (
    id VARCHAR PRIMARY KEY,
    engagement_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    confidentiality VARCHAR NOT NULL CHECK (confidentiality IN ('internal', 'confidential', 'restricted'))
);

CREATE TABLE folder_access (
    id VARCHAR PRIMARY KEY,
    folder_id VARCHAR NOT NULL,
    employee_id VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('read', 'edit')),
    approval_id VARCHAR,
    granted_at TIMESTAMP NOT NULL
);

CREATE TABLE access_logs (
    id INTEGER PRIMARY KEY,
    folder_id VARCHAR NOT NULL,
    employee_id VARCHAR NOT NULL,
    action VARCHAR NOT NULL CHECK (action IN ('grant_read', 'grant_edit')),
    logged_at TIMESTAMP NOT NULL
);

-- Software catalogue and licence provisioning.
CREATE TABLE software_catalog (
    sku VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    bundle_roles VARCHAR NOT NULL,
    engagement_only BOOLEAN NOT NULL,
    annual_cost DECIMAL(10, 2) NOT NULL,
    seats_total INTEGER NOT NULL,
    seats_used INTEGER NOT NULL,
    CHECK (seats_used <= seats_total)
);

CREATE TABLE licences (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    sku VARCHAR NOT NULL,
    engagement_id VARCHAR,
    approval_id VARCHAR,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'revoked')),
    assigned_at TIMESTAMP NOT NULL
);

-- Hardware catalogue, orders and the asset register.
CREATE TABLE hardware_catalog (
    sku VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    category VARCHAR NOT NULL CHECK (category IN ('laptop', 'monitor', 'phone', 'headset', 'dock')),
    min_level VARCHAR NOT NULL,
    price DECIMAL(10, 2) NOT NULL
);

CREATE TABLE hardware_orders (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    sku VARCHAR NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('new_joiner', 'entitlement', 'replacement')),
    replaces_asset VARCHAR,
    cost DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('placed', 'delivered')),
    ordered_at TIMESTAMP NOT NULL
);

CREATE TABLE device_assignments (
    asset_tag VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    sku VARCHAR NOT NULL,
    category VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'faulty', 'returned')),
    assigned_on DATE NOT NULL
);

-- Expenses: reports, their lines, and the limits per category.
CREATE TABLE expense_policy (
    category VARCHAR PRIMARY KEY,
    cap DECIMAL(10, 2) NOT NULL,
    receipt_over DECIMAL(10, 2) NOT NULL
);

CREATE TABLE expense_reports (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    engagement_id VARCHAR,
    status VARCHAR NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'paid')),
    approver_id VARCHAR,
    claimed_total DECIMAL(10, 2),
    submitted_at TIMESTAMP
);

CREATE TABLE expenses (
    report_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    category VARCHAR NOT NULL,
    spent_on DATE NOT NULL,
    amount DECIMAL(10, 2) NOT NULL,
    has_receipt BOOLEAN NOT NULL,
    merchant VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('draft', 'claimed', 'excluded')),
    PRIMARY KEY (report_id, line_no)
);

-- Learning platform.
CREATE TABLE courses (
    code VARCHAR PRIMARY KEY,
    title VARCHAR NOT NULL,
    mandatory BOOLEAN NOT NULL,
    min_level VARCHAR NOT NULL,
    external_fee DECIMAL(10, 2) NOT NULL,
    valid_months INTEGER,
    seats INTEGER NOT NULL,
    seats_taken INTEGER NOT NULL,
    CHECK (seats_taken <= seats)
);

CREATE TABLE course_prerequisites (
    course_code VARCHAR NOT NULL,
    prerequisite_code VARCHAR NOT NULL,
    PRIMARY KEY (course_code, prerequisite_code)
);

CREATE TABLE enrolments (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    course_code VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('enrolled', 'waitlisted', 'completed')),
    enrolled_at TIMESTAMP NOT NULL,
    completed_on DATE
);

-- Approvals workflow: every request routed to a named approver.
CREATE TABLE approvals (
    id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL CHECK (kind IN ('software', 'hardware', 'expense', 'folder_access', 'staffing', 'travel', 'training')),
    subject VARCHAR NOT NULL,
    requester_id VARCHAR NOT NULL,
    approver_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    amount DECIMAL(10, 2),
    note VARCHAR NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);

-- Corporate travel: policy per region and the requests.
CREATE TABLE travel_policy (
    region VARCHAR PRIMARY KEY,
    hotel_night_cap DECIMAL(10, 2) NOT NULL,
    advance_days INTEGER NOT NULL,
    business_class_from_level VARCHAR
);

CREATE TABLE travel_requests (
    id VARCHAR PRIMARY KEY,
    employee_id VARCHAR NOT NULL,
    engagement_id VARCHAR NOT NULL,
    destination VARCHAR NOT NULL,
    region VARCHAR NOT NULL,
    depart_on DATE NOT NULL,
    return_on DATE NOT NULL,
    travel_class VARCHAR NOT NULL CHECK (travel_class IN ('economy', 'premium_economy', 'business')),
    estimated_cost DECIMAL(10, 2) NOT NULL,
    approver_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('pending_approval', 'approved', 'booked', 'cancelled')),
    created_at TIMESTAMP NOT NULL
);
