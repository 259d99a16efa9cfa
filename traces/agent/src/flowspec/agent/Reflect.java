package flowspec.agent;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads the broker's objects by member name: the agent is compiled against no RocketMQ class, so
 * one jar serves every release whose names match (docs/agent.md, "Releases").
 */
final class Reflect {
    /** Per class, its members by name, found once (a hook reads several on every event). */
    private static final ClassValue<Map<String, Method>> METHODS = byName();
    private static final ClassValue<Map<String, Field>> FIELDS = byName();

    private static <T> ClassValue<Map<String, T>> byName() {
        return new ClassValue<>() {
            @Override
            protected Map<String, T> computeValue(Class<?> type) {
                return new ConcurrentHashMap<>();
            }
        };
    }

    private Reflect() {
    }

    static Object call(Object target, String name) {
        Class<?> c = target.getClass();
        Method m = METHODS.get(c).computeIfAbsent(name, k -> method(c, name));
        try {
            return m.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot call " + c.getName() + "." + name + "(): " + e, e);
        }
    }

    static Object get(Object target, String name) {
        Class<?> c = target.getClass();
        Field f = FIELDS.get(c).computeIfAbsent(name, k -> field(c, name));
        try {
            return f.get(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + c.getName() + "." + name + ": " + e, e);
        }
    }

    static void set(Object target, String name, Object value) {
        Field f = field(target.getClass(), name);
        try {
            f.set(target, value);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot set " + target.getClass().getName() + "." + name + ": " + e, e);
        }
    }

    static boolean hasField(Object target, String name) {
        for (Class<?> k = target.getClass(); k != null; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getName().equals(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    static int getInt(Object target, String getter) {
        return ((Number) call(target, getter)).intValue();
    }

    static long getLong(Object target, String getter) {
        return ((Number) call(target, getter)).longValue();
    }

    static boolean getBool(Object target, String getter) {
        return (Boolean) call(target, getter);
    }

    private static Method method(Class<?> c, String name) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            for (Method m : k.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == 0) {
                    m.setAccessible(true);
                    return m;
                }
            }
        }
        throw new IllegalStateException(c.getName() + " has no method " + name + "()");
    }

    private static Field field(Class<?> c, String name) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new IllegalStateException(c.getName() + " has no field " + name);
    }
}
