/**
 * Partial Java models of the objects the controller reads, and the labels and annotations it uses.
 * No logic.
 *
 * <p>The models are deliberately partial: unknown fields are ignored when reading, so these types
 * must never be sent back with PUT/UPDATE (that would erase what we do not model). Write with JSON
 * merge patches of exactly the changed fields.
 *
 * <p>Imports nothing of this project.
 */
package dev.capk.vmieviction.api;
