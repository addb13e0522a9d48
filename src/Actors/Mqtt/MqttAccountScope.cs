using Courier.Actors.Accounts;

namespace Courier.Actors.Mqtt;

/// <summary>
/// MQTT state is per account, as nats-server keeps it in each account's own streams: a client id names a
/// session and a topic a retained message only within the account its client logged into. One key string
/// carries both: the value alone in the global account (so a store written before accounts is read as it
/// was), else the account's name, U+0000, the value. MQTT strings never hold U+0000 [MQTT-1.5.4-2], so no
/// global key looks like an account's.
/// </summary>
internal static class MqttAccountScope
{
    private const char Separator = '\0';

    /// <summary>The key of <paramref name="value"/> (a client id, a retained message's subject) in <paramref name="account"/>.</summary>
    public static string Key(Account account, string value) => account.IsGlobal ? value : account.Name + Separator + value;

    /// <summary>The account name of <paramref name="key"/> (null: the global account) and its value.</summary>
    public static (string? Account, string Value) Split(string key)
    {
        var at = key.IndexOf(Separator, StringComparison.Ordinal);
        return at < 0 ? (null, key) : (key[..at], key[(at + 1)..]);
    }

    /// <summary>Whether <paramref name="key"/> belongs to <paramref name="account"/>; its value if so.</summary>
    public static bool InAccount(string key, Account account, out ReadOnlySpan<char> value)
    {
        var at = key.IndexOf(Separator, StringComparison.Ordinal);
        if (account.IsGlobal)
        {
            value = key;
            return at < 0;
        }

        value = at >= 0 && key.AsSpan(0, at).SequenceEqual(account.Name) ? key.AsSpan(at + 1) : default;
        return at >= 0 && key.AsSpan(0, at).SequenceEqual(account.Name);
    }

    /// <summary>The journal id of the session <paramref name="key"/>: as before accounts in the global account.</summary>
    public static string SessionPersistenceId(string key)
    {
        var (account, clientId) = Split(key);
        return account is null ? "$MQTT/sess/" + clientId : "$MQTT/acc/" + account + "/sess/" + clientId;
    }
}
