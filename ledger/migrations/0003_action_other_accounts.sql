-- The accounts other than an action's actor that browserop saw signed in on
-- its site while the action was unsettled (executing or ambiguous): a JSON
-- list of handles, NULL for none. A click that a browser carried out after
-- the account changed may have landed on one of them, so a view read as the
-- actor never proves such an action absent; a person settles it, told which
-- accounts may hold the effect. See docs/operator.md, "Late clicks and other
-- accounts".
ALTER TABLE actions ADD COLUMN other_accounts_json TEXT;
