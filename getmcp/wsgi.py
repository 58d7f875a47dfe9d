from django.core.wsgi import get_wsgi_application

from getmcp.environment.startup import name_settings_module

name_settings_module()
application = get_wsgi_application()
