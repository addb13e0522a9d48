namespace Courier.Gateway.Configuration;

/// <summary>Route URLs as nats-server takes them: <c>nats-route://[user:pass@]host:port</c> (any scheme with a host and port).</summary>
internal static class RouteUrls
{
    /// <summary>Parses one route URL; false when it has no host or no port.</summary>
    public static bool TryParse(string text, out Uri url)
    {
        url = null!;
        var trimmed = text.Trim();
        if (!Uri.TryCreate(trimmed, UriKind.Absolute, out var parsed) || parsed.Host.Length == 0 || parsed.IsDefaultPort && parsed.Port <= 0)
        {
            return false;
        }

        url = parsed;
        return true;
    }

    /// <summary>
    /// <c>--routes url1,url2</c> (nats-server's RoutesFromStr): comma-separated URLs; an empty string
    /// means no routes. Null with <paramref name="error"/> set when one does not parse.
    /// </summary>
    public static List<Uri>? FromFlag(string value, out string? error)
    {
        error = null;
        var routes = new List<Uri>();
        if (value.Length == 0)
        {
            return routes;
        }

        foreach (var part in value.Split(','))
        {
            if (!TryParse(part, out var url))
            {
                error = $"error parsing route url [\"{part.Trim()}\"]";
                return null;
            }

            routes.Add(url);
        }

        return routes;
    }
}
