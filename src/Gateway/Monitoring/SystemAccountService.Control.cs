using System.Text.Json;
using Courier.Actors.Connections;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// The request kinds nats-server 2.10 added (server/events.go): <c>IDZ</c> (by PING and by id), and by id
/// only <c>KICK</c> and <c>LDM</c>, whose body <c>{"cid":N}</c> names the connection to close or to tell of
/// lame duck mode, and <c>RELOAD</c>, which reloads the configuration as SIGHUP does.
/// </summary>
internal sealed partial class SystemAccountService
{
    // $SYS.REQ.SERVER.{PING,<id>}.IDZ: {"name":..,"host":..,"id":..}, no envelope, no options (nats-server's idzReq).
    private void IdzRequest(InternalMessage m)
    {
        if (string.IsNullOrEmpty(m.ReplyTo))
        {
            return;
        }

        var idz = new ServerIdz { Name = _broker.ServerName, Host = _broker.Options.Host, Id = _broker.ServerId };
        Reply(m.ReplyTo, JsonSerializer.SerializeToUtf8Bytes(idz, GatewayJsonContext.Default.ServerIdz));
    }

    // $SYS.REQ.SERVER.<id>.KICK / .LDM {"cid":N}: a body that is not such JSON is only logged, as nats-server's
    // kickClient and ldmClient do; then the body's server filter applies, and the answer is {"server":...}
    // alone, or with the error of a connection that is not there (or not able to take an async INFO).
    private void ClientControlRequest(string kind, InternalMessage m)
    {
        if (!TryControlBody(m, out var cid, out var reason))
        {
            Log.RequestFailed(_log, m.Subject, reason);
            return;
        }

        if (!TryAccept(m, out var reply, out _))
        {
            return;
        }

        var error = kind == "KICK" ? _broker.KickClient(cid) : _broker.SendLameDuckInfo(cid);
        Reply(reply, error is null ? ServerOnly() : Error(500, error));
    }

    // nats-server's KickClientReq / LDMClientReq: {"cid":<uint64>}; a missing cid is 0 (no connection has it).
    private static bool TryControlBody(InternalMessage m, out ulong cid, out string reason)
    {
        cid = 0;
        reason = "";
        try
        {
            using var document = JsonDocument.Parse(m.Payload);
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                reason = $"json: cannot unmarshal {root.ValueKind.ToString().ToLowerInvariant()} into Go value";
                return false;
            }

            if (root.TryGetProperty("cid", out var value) && !value.TryGetUInt64(out cid))
            {
                reason = "json: cannot unmarshal cid into Go struct field of type uint64";
                return false;
            }

            return true;
        }
        catch (JsonException e)
        {
            reason = e.Message;
            return false;
        }
    }

    private Func<string?>? _reload;

    // $SYS.REQ.SERVER.<id>.RELOAD: the configuration reloaded as a SIGHUP reloads it (nats-server's reloadConfig, a zReq
    // with the server filter): {"server":...}, or its error with code 500 (a body it cannot read: 400).
    private void ReloadRequest(InternalMessage m)
    {
        if (!TryAccept(m, out var reply, out _))
        {
            return;
        }

        var error = _reload is { } reload ? reload() : "config reload not available";
        Reply(reply, error is null ? ServerOnly() : Error(500, error));
    }

    // {"server":<server>}: a request done with nothing to say (nats-server's ServerAPIResponse without data).
    private byte[] ServerOnly() =>
        [.. "{\"server\":"u8, .. JsonSerializer.SerializeToUtf8Bytes(_events.NextServer(), Courier.Actors.Events.EventsJsonContext.Default.EventServer), (byte)'}'];
}
