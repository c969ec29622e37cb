-- The ticketing tables (ticket_users, tickets) are not here: they come from the Ticketing that tools.py
-- declares (thinkingbox_env/toolkit/ticketing.py, Ticketing.schema_sql), with this domain's categories and teams.
-- Harborlight Stays: eight backend systems. Ticketing; the customer CRM (profiles, VIP tiers,
-- loyalty, preferences); reservations (bookings, modification history, special requests,
-- inventory); group sales (group blocks and their services); corporate accounts (negotiated
-- rates, invoices and their adjustments); payments (methods, charges, refunds, disputes);
-- the hotel-partner system (hotels, partner terms, contacts, the hotel's own reservation
-- records, verifications, escalations); lookups (room types, the service catalogue).
-- Free-text columns that do not carry a task's outcome are volatile in domain.yaml.

-- CRM
CREATE TABLE customers (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    phone VARCHAR NOT NULL,
    vip_tier VARCHAR NOT NULL CHECK (vip_tier IN ('member', 'silver', 'gold', 'platinum')),
    corporate_account_id VARCHAR,
    preferences VARCHAR,
    member_since DATE NOT NULL
);

CREATE TABLE loyalty_transactions (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    points INTEGER NOT NULL,
    reason VARCHAR NOT NULL CHECK (reason IN ('stay', 'compensation', 'redemption', 'adjustment')),
    booking_id VARCHAR,
    created_at TIMESTAMP NOT NULL
);

-- Lookups
CREATE TABLE room_types (
    hotel_id VARCHAR NOT NULL,
    room_code VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    base_rate DECIMAL(10, 2) NOT NULL CHECK (base_rate > 0),
    max_guests INTEGER NOT NULL,
    allotment INTEGER NOT NULL,
    PRIMARY KEY (hotel_id, room_code)
);

CREATE TABLE service_catalog (
    code VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('complimentary_request', 'paid_extra', 'group_service')),
    price DECIMAL(10, 2) NOT NULL CHECK (price >= 0),
    unit VARCHAR NOT NULL CHECK (unit IN ('per_stay', 'per_night', 'per_day', 'per_guest'))
);

-- Hotel partners (partner_tier and commission_pct are internal)
CREATE TABLE hotels (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    city VARCHAR NOT NULL,
    country VARCHAR NOT NULL,
    star_rating INTEGER NOT NULL,
    check_in_time VARCHAR NOT NULL,
    check_out_time VARCHAR NOT NULL,
    partner_tier VARCHAR NOT NULL CHECK (partner_tier IN ('standard', 'preferred', 'strategic')),
    commission_pct DECIMAL(5, 2) NOT NULL
);

CREATE TABLE hotel_contacts (
    hotel_id VARCHAR NOT NULL,
    role VARCHAR NOT NULL CHECK (role IN ('front_desk', 'reservations', 'revenue_manager', 'duty_manager')),
    name VARCHAR NOT NULL,
    phone VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    PRIMARY KEY (hotel_id, role)
);

CREATE TABLE hotel_reservations (
    hotel_id VARCHAR NOT NULL,
    confirmation_code VARCHAR NOT NULL,
    guest_name VARCHAR NOT NULL,
    room_code VARCHAR NOT NULL,
    check_in DATE NOT NULL,
    check_out DATE NOT NULL,
    nightly_rate DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('confirmed', 'cancelled', 'checked_out', 'no_show')),
    PRIMARY KEY (hotel_id, confirmation_code)
);

CREATE TABLE hotel_verifications (
    id VARCHAR PRIMARY KEY,
    booking_id VARCHAR NOT NULL,
    hotel_id VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL CHECK (outcome IN ('matched', 'not_found', 'rate_mismatch', 'room_mismatch', 'dates_mismatch', 'cancelled_at_hotel')),
    detail VARCHAR NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE hotel_escalations (
    id VARCHAR PRIMARY KEY,
    hotel_id VARCHAR NOT NULL,
    booking_id VARCHAR,
    issue VARCHAR NOT NULL CHECK (issue IN ('missing_reservation', 'rate_discrepancy', 'room_discrepancy', 'dates_discrepancy', 'special_request', 'guest_complaint', 'group_change')),
    contact_role VARCHAR NOT NULL CHECK (contact_role IN ('front_desk', 'reservations', 'revenue_manager', 'duty_manager')),
    priority VARCHAR NOT NULL CHECK (priority IN ('normal', 'high', 'urgent')),
    status VARCHAR NOT NULL CHECK (status IN ('open', 'resolved')),
    detail VARCHAR NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);

-- Corporate accounts
CREATE TABLE corporate_accounts (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'suspended')),
    billing_contact_email VARCHAR NOT NULL,
    benefits VARCHAR,
    payment_terms_days INTEGER NOT NULL
);

CREATE TABLE corporate_rates (
    account_id VARCHAR NOT NULL,
    hotel_id VARCHAR NOT NULL,
    room_code VARCHAR NOT NULL,
    nightly_rate DECIMAL(10, 2) NOT NULL CHECK (nightly_rate > 0),
    valid_to DATE NOT NULL,
    PRIMARY KEY (account_id, hotel_id, room_code)
);

CREATE TABLE corporate_invoices (
    id VARCHAR PRIMARY KEY,
    account_id VARCHAR NOT NULL,
    issued_on DATE NOT NULL,
    due_on DATE NOT NULL,
    amount DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('open', 'paid', 'overdue'))
);

CREATE TABLE invoice_lines (
    invoice_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    booking_id VARCHAR NOT NULL,
    nights INTEGER NOT NULL,
    nightly_rate DECIMAL(10, 2) NOT NULL,
    amount DECIMAL(10, 2) NOT NULL,
    PRIMARY KEY (invoice_id, line_no)
);

CREATE TABLE invoice_adjustments (
    id VARCHAR PRIMARY KEY,
    invoice_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    amount DECIMAL(10, 2) NOT NULL CHECK (amount > 0),
    reason VARCHAR NOT NULL CHECK (reason IN ('negotiated_rate', 'benefit_not_applied', 'not_account_booking', 'duplicate_line')),
    created_at TIMESTAMP NOT NULL
);

-- Reservations
CREATE TABLE bookings (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    hotel_id VARCHAR NOT NULL,
    room_code VARCHAR NOT NULL,
    confirmation_code VARCHAR NOT NULL,
    check_in DATE NOT NULL,
    check_out DATE NOT NULL,
    guests INTEGER NOT NULL CHECK (guests >= 1),
    rate_type VARCHAR NOT NULL CHECK (rate_type IN ('flexible', 'saver', 'corporate', 'group')),
    nightly_rate DECIMAL(10, 2) NOT NULL,
    total DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('confirmed', 'payment_pending', 'cancelled', 'completed', 'released')),
    group_id VARCHAR,
    corporate_account_id VARCHAR,
    created_at TIMESTAMP NOT NULL,
    cancelled_at TIMESTAMP
);

CREATE TABLE booking_changes (
    id VARCHAR PRIMARY KEY,
    booking_id VARCHAR NOT NULL,
    change VARCHAR NOT NULL CHECK (change IN ('dates', 'room', 'dates_and_room', 'guests', 'cancellation')),
    old_value VARCHAR NOT NULL,
    new_value VARCHAR NOT NULL,
    fee DECIMAL(10, 2) NOT NULL,
    price_difference DECIMAL(10, 2) NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE special_requests (
    id VARCHAR PRIMARY KEY,
    booking_id VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    detail VARCHAR NOT NULL DEFAULT '',
    price DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('requested', 'confirmed', 'declined')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE room_inventory (
    hotel_id VARCHAR NOT NULL,
    room_code VARCHAR NOT NULL,
    stay_date DATE NOT NULL,
    rooms_left INTEGER NOT NULL CHECK (rooms_left >= 0),
    PRIMARY KEY (hotel_id, room_code, stay_date)
);

-- Group sales
CREATE TABLE groups (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    organizer_id VARCHAR NOT NULL,
    hotel_id VARCHAR NOT NULL,
    check_in DATE NOT NULL,
    check_out DATE NOT NULL,
    billing VARCHAR NOT NULL CHECK (billing IN ('master_account', 'individual')),
    payment_method_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('confirmed', 'cancelled', 'completed'))
);

CREATE TABLE group_services (
    id VARCHAR PRIMARY KEY,
    group_id VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    service_date DATE NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity >= 1),
    amount DECIMAL(10, 2) NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('booked', 'cancelled')),
    created_at TIMESTAMP NOT NULL
);

-- Payments
CREATE TABLE payment_methods (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    brand VARCHAR NOT NULL CHECK (brand IN ('visa', 'mastercard', 'amex')),
    last4 VARCHAR NOT NULL,
    expires VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('active', 'expired', 'declined')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE payments (
    id VARCHAR PRIMARY KEY,
    booking_id VARCHAR,
    group_id VARCHAR,
    payment_method_id VARCHAR NOT NULL,
    amount DECIMAL(10, 2) NOT NULL CHECK (amount > 0),
    purpose VARCHAR NOT NULL CHECK (purpose IN ('booking', 'price_difference', 'change_fee', 'cancellation_fee', 'extra', 'group_service', 'balance_due')),
    status VARCHAR NOT NULL CHECK (status IN ('captured', 'failed', 'refunded', 'partially_refunded')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE refunds (
    id VARCHAR PRIMARY KEY,
    payment_id VARCHAR NOT NULL,
    booking_id VARCHAR,
    amount DECIMAL(10, 2) NOT NULL CHECK (amount > 0),
    reason VARCHAR NOT NULL CHECK (reason IN ('cancellation', 'price_difference', 'hotel_fault', 'compensation', 'duplicate_charge')),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE disputes (
    id VARCHAR PRIMARY KEY,
    payment_id VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('open', 'won', 'lost')),
    opened_on DATE NOT NULL
);

CREATE TABLE compensations (
    id VARCHAR PRIMARY KEY,
    customer_id VARCHAR NOT NULL,
    booking_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('travel_credit', 'points')),
    amount DECIMAL(10, 2) NOT NULL CHECK (amount > 0),
    reason VARCHAR NOT NULL CHECK (reason IN ('cleanliness', 'noise', 'maintenance', 'service', 'overbooking')),
    created_at TIMESTAMP NOT NULL
);
