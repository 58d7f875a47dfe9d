from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView


@extend_schema(exclude=True)
class SchemaView(SpectacularAPIView):
    """The OpenAPI document of this API, public so tools can read it before holding a token."""
