from rest_framework.pagination import CursorPagination, PageNumberPagination


class Pages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class CallCursor(CursorPagination):
    """Call logs grow while they are read: a cursor never shows a row twice or skips one."""

    ordering = ("-at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
