-- Threading also looks a reply's In-Reply-To up among sends not yet recorded (ingest/thread.ts):
-- after a failover the record of a send can commit after its reply is read. Only the requests
-- whose Message-ID is out but unrecorded are indexed: a handful at any time.
create index send_request_message_open on send_request (message_id) where state in ('in_flight', 'unknown', 'possibly_sent');
