"""Response hooks the suite's retry tests pass to clients (`raw_response_hook`, `retry_hook`)."""


class ResponseCallback(object):
    """Rewrites a response's status code: the first matching one, or every matching one."""

    def __init__(self, status=None, new_status=None):
        self.status = status
        self.new_status = new_status
        self.first = True
        self.count = 0

    def override_first_status(self, response):
        if self.first and response.http_response.status_code == self.status:
            response.http_response.status_code = self.new_status
            self.first = False
        self.count += 1

    def override_status(self, response):
        if response.http_response.status_code == self.status:
            response.http_response.status_code = self.new_status
        self.count += 1


class RetryCounter(object):
    """Counts the retries a client makes."""

    def __init__(self):
        self.count = 0

    def simple_count(self, retry_context):
        self.count += 1
