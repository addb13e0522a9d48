using System.Text.Json;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Requests whose answer is one JSON document (system-account requests, monitoring over NATS).</summary>
public static class NatsJson
{
    /// <summary>Sends <paramref name="body"/> to <paramref name="subject"/> and parses the reply.</summary>
    public static async Task<JsonElement> RequestAsync(NatsConnection nats, string subject, string body = "")
    {
        var reply = await nats.RequestAsync<string, string>(subject, body);
        return JsonDocument.Parse(reply.Data!).RootElement.Clone();
    }
}
