"""The timer: follows the event stream, holds deadlines, calls the table's Timeout at zero."""
