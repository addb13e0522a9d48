using System.Net;
using System.Text.Json;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Reads the HTTP monitoring endpoints (/varz, /connz, ...) of a server process.</summary>
public sealed class MonitorClient : IDisposable
{
    private readonly HttpClient _http;
    private readonly ServerProcess _server;

    public MonitorClient(ServerProcess server)
    {
        _server = server;
        _http = new HttpClient { BaseAddress = server.MonitorUri, Timeout = TimeSpan.FromSeconds(10) };
    }

    /// <summary>GETs <paramref name="pathAndQuery"/>; returns the status and body.</summary>
    public async Task<(HttpStatusCode Status, string Body, string? ContentType)> GetAsync(string pathAndQuery)
    {
        using var response = await _http.GetAsync(pathAndQuery);
        var body = await response.Content.ReadAsStringAsync();
        return (response.StatusCode, body, response.Content.Headers.ContentType?.MediaType);
    }

    /// <summary>GETs <paramref name="pathAndQuery"/>, expects 200 with a JSON body, returns its root.</summary>
    public async Task<JsonElement> GetJsonAsync(string pathAndQuery)
    {
        var (status, body, _) = await GetAsync(pathAndQuery);
        Assert.True(status == HttpStatusCode.OK, $"GET {pathAndQuery}: {(int)status} {body}\n{_server.Diagnostics()}");
        try
        {
            using var doc = JsonDocument.Parse(body);
            return doc.RootElement.Clone();
        }
        catch (JsonException e)
        {
            Assert.Fail($"GET {pathAndQuery}: body is not JSON ({e.Message}): {body}\n{_server.Diagnostics()}");
            throw;
        }
    }

    /// <summary>The connection in /connz?subs=1 whose client port is <paramref name="clientPort"/>.</summary>
    public async Task<JsonElement> GetConnectionAsync(int clientPort, string query = "subs=1")
    {
        var connz = await GetJsonAsync($"/connz?{query}");
        foreach (var conn in connz.GetProperty("connections").EnumerateArray())
        {
            if (conn.GetProperty("port").GetInt32() == clientPort)
            {
                return conn;
            }
        }

        Assert.Fail($"no connection with client port {clientPort} in /connz: {connz}\n{_server.Diagnostics()}");
        throw new InvalidOperationException("unreachable");
    }

    public void Dispose() => _http.Dispose();
}
