from rest_framework import serializers
from rest_framework.pagination import CursorPagination, PageNumberPagination


class StrictPageSize:
    """A page_size that is not a positive integer is an error, not silently the default."""

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if size < 1:
            raise serializers.ValidationError(
                {self.page_size_query_param: ["must be a positive integer"]}
            )
        return min(size, self.max_page_size)


class Pages(StrictPageSize, PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class CallCursor(StrictPageSize, CursorPagination):
    """Call logs grow while they are read: a cursor never shows a row twice or skips one."""

    ordering = ("-at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
