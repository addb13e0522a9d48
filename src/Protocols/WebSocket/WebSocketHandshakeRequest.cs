namespace Courier.Protocols.WebSocket;

/// <summary>An HTTP/1.1 request head: request line and headers (names compared case-insensitively).</summary>
internal sealed class WebSocketHandshakeRequest
{
    public WebSocketHandshakeRequest(string method, string target, string version, IReadOnlyList<KeyValuePair<string, string>> headers)
    {
        Method = method;
        Target = target;
        Version = version;
        Headers = headers;
    }

    public string Method { get; }

    /// <summary>The request target as sent (<c>/</c>, <c>/mqtt</c>, ...).</summary>
    public string Target { get; }

    /// <summary><c>HTTP/1.1</c>.</summary>
    public string Version { get; }

    public IReadOnlyList<KeyValuePair<string, string>> Headers { get; }

    /// <summary>The first value of header <paramref name="name"/>, or null.</summary>
    public string? Get(string name)
    {
        foreach (var (key, value) in Headers)
        {
            if (string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                return value;
            }
        }

        return null;
    }

    /// <summary>True when any value of header <paramref name="name"/> has the comma-separated token <paramref name="token"/> (case-insensitive).</summary>
    public bool HasToken(string name, string token)
    {
        foreach (var (key, value) in Headers)
        {
            if (!string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            foreach (var part in value.Split(','))
            {
                if (string.Equals(part.Trim(' ', '\t'), token, StringComparison.OrdinalIgnoreCase))
                {
                    return true;
                }
            }
        }

        return false;
    }

    /// <summary>All values of header <paramref name="name"/>.</summary>
    public IEnumerable<string> GetAll(string name)
    {
        foreach (var (key, value) in Headers)
        {
            if (string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                yield return value;
            }
        }
    }
}
